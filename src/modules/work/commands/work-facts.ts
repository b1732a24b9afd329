import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { GetMemberFactsQuery, MemberFacts } from '../../identity';
import { GetBuiltInRoleIdQuery, memberRoleStream } from '../../roles';
import type { WorkflowToStart } from '../domain/assignment';
import type { WorkCaller } from '../domain/work-access.policy';
import { workflowDecider } from '../domain/workflow';
import { workflowStream } from '../domain/work.events';

/** The caller as a request names it; WorkFacts.caller adds what the policies need. */
export interface CallerRef {
  scopes: readonly string[];
  memberId: number | undefined;
  roleId: number | null | undefined;
  /** An API key's or OAuth token's own scopes (WorkCaller.credentialScopes). */
  credentialScopes?: readonly string[];
}

interface GateRole {
  exists: boolean;
  workspaceId: string | null;
  gone: boolean;
  mergedInto: number | null;
}

const MAX_MERGE_HOPS = 8;

/**
 * Folds a role's stream into what gates need. Roles own the stream and add event types
 * over time: unknown types are skipped, the ones read here are read defensively (as
 * identity's RoleLookup does). Decisions read streams, never a read model of roles.
 */
function evolveRole(state: GateRole, event: DomainEvent): GateRole {
  const d = (event.data ?? {}) as Record<string, unknown>;
  switch (event.type) {
    case 'MemberRoleCreated':
      return { ...state, exists: true, workspaceId: String(d.workspaceId) };
    case 'MemberRoleDeleted':
      return { ...state, gone: true };
    case 'MemberRolesMerged':
      return { ...state, gone: true, mergedInto: typeof d.targetRoleId === 'number' ? d.targetRoleId : null };
    default:
      return state;
  }
}

/**
 * What work decisions need from other features and from its own streams: members (asked of
 * identity through its public query), roles (their streams), the workflow to start.
 */
@Injectable()
export class WorkFacts {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
  ) {}

  members(workspaceId: string, memberIds: readonly number[]): Promise<Map<number, MemberFacts>> {
    return this.queries.execute<GetMemberFactsQuery, Map<number, MemberFacts>>(
      new GetMemberFactsQuery(workspaceId, memberIds),
    );
  }

  /** Ids among `memberIds` that are no active member of the workspace. */
  async unknownMembers(workspaceId: string, memberIds: readonly number[]): Promise<number[]> {
    const found = await this.members(workspaceId, memberIds);
    return [...new Set(memberIds)].filter((id) => found.get(id)?.status !== 'active');
  }

  async caller(workspaceId: string, ref: CallerRef): Promise<WorkCaller> {
    const externalRoleId =
      ref.roleId == null
        ? undefined
        : await this.queries.execute<GetBuiltInRoleIdQuery, number | undefined>(
            new GetBuiltInRoleIdQuery(workspaceId, 'external'),
          );
    return {
      scopes: ref.scopes,
      memberId: ref.memberId,
      isExternal: ref.roleId != null && ref.roleId === externalRoleId,
      ...(ref.credentialScopes !== undefined ? { credentialScopes: ref.credentialScopes } : {}),
    };
  }

  private async role(roleId: number): Promise<GateRole> {
    const { state } = await this.repo.load(memberRoleStream(roleId), {
      initialState: (): GateRole => ({ exists: false, workspaceId: null, gone: false, mergedInto: null }),
      evolve: evolveRole,
    });
    return state;
  }

  /** Gate role ids that are no live role of the workspace (400 on create and update). */
  async unknownRoles(workspaceId: string, roleIds: readonly number[]): Promise<number[]> {
    const unique = [...new Set(roleIds)];
    const roles = await Promise.all(unique.map((id) => this.role(id)));
    return unique.filter((_, i) => !roles[i].exists || roles[i].gone || roles[i].workspaceId !== workspaceId);
  }

  /**
   * The roles that count as listed by a gate: its own, and for one merged away since, the
   * role it was merged into (a merge moves the duplicate's references onto the target).
   */
  async admittedRoles(workspaceId: string, roleIds: readonly number[]): Promise<number[]> {
    const admitted = new Set<number>();
    for (const start of roleIds) {
      let id: number | null = start;
      for (let hop = 0; id !== null && hop <= MAX_MERGE_HOPS; hop++) {
        const role = await this.role(id);
        if (!role.exists || role.workspaceId !== workspaceId) break;
        if (!role.gone) {
          admitted.add(id);
          break;
        }
        id = role.mergedInto;
      }
    }
    return [...admitted];
  }

  /** The workflow as its own stream shows it, for starting it (undefined: none). */
  async workflowToStart(workspaceId: string, workflowId: number): Promise<WorkflowToStart | undefined> {
    const { state } = await this.repo.load(workflowStream(workflowId), workflowDecider);
    if (state.status === 'none' || state.workspaceId !== workspaceId) return undefined;
    return {
      workflowId: state.workflowId,
      uuid: state.uuid,
      workspaceId: state.workspaceId,
      name: state.name,
      live: state.status === 'active',
      roleGate: state.roleGate,
      admittedRoleIds: state.roleGate ? await this.admittedRoles(workspaceId, state.roleGate.roleIds) : [],
    };
  }

  async workflowExists(workspaceId: string, workflowId: number): Promise<boolean> {
    const { state } = await this.repo.load(workflowStream(workflowId), workflowDecider);
    return state.status === 'active' && state.workspaceId === workspaceId;
  }
}
