import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AssignmentStatus, RoleGate, TaskPriority, TaskStatus } from '../domain/work.events';

@Entity({ name: 'workflows' })
export class WorkflowEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid') uuid: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('integer', { name: 'agent_id' }) agentId: number;
  @Column('integer', { name: 'default_phone_number_id', nullable: true }) defaultPhoneNumberId: number | null;
  @Column('jsonb', { name: 'role_gate', nullable: true }) roleGate: RoleGate | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of `workflow-<id>` this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'assignments' })
export class AssignmentEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'workflow_id' }) workflowId: number;
  @Column('uuid', { name: 'workflow_uuid' }) workflowUuid: string;
  /** The workflow's name when the assignment started (what `search` matches). */
  @Column('text', { name: 'workflow_name' }) workflowName: string;
  @Column('integer', { name: 'member_id' }) memberId: number;
  @Column('text') status: AssignmentStatus;
  @Column('timestamptz', { name: 'started_at' }) startedAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'tasks' })
export class TaskEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text') title: string;
  @Column('text', { nullable: true }) slug: string | null;
  @Column('text', { nullable: true }) description: string | null;
  @Column('integer', { name: 'workflow_id', nullable: true }) workflowId: number | null;
  @Column('boolean', { name: 'is_admin' }) isAdmin: boolean;
  @Column('text') status: TaskStatus;
  @Column('text') priority: TaskPriority;
  @Column('timestamptz', { name: 'due_at', nullable: true }) dueAt: Date | null;
  @Column('integer', { array: true }) assignees: number[];
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
