import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { ROLE_GATE_MAX_ROLES, ROLE_GATE_MESSAGE_MAX } from '../domain/role-gate.policy';
import type { RoleGate } from '../domain/work.events';
import { WORKFLOW_NAME_MAX } from '../domain/workflow';
import type { WorkflowEntity } from '../projections/work.entities';

export class RoleGateDto {
  @ApiProperty({ type: [Number], description: 'roles of this workspace allowed to start the workflow' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(ROLE_GATE_MAX_ROLES)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  roleIds: number[];

  @ApiPropertyOptional({
    maxLength: ROLE_GATE_MESSAGE_MAX,
    description: 'the detail of the 403 every other member gets',
  })
  @IsOptional()
  @IsString()
  @MaxLength(ROLE_GATE_MESSAGE_MAX)
  message?: string;
}

export class CreateWorkflowDto {
  @ApiProperty({ maxLength: WORKFLOW_NAME_MAX, example: 'Intake call' })
  @IsString()
  @MinLength(1)
  @MaxLength(WORKFLOW_NAME_MAX)
  name: string;

  @ApiProperty({ description: 'an agent member of this workspace (kind agent)' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  agentId: number;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'phone number used by SMS and voice chats of this workflow',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  defaultPhoneNumberId?: number | null;

  @ApiPropertyOptional({
    type: RoleGateDto,
    nullable: true,
    description: 'Member Role Gate',
    example: { roleIds: [1], message: 'Only coordinators may start this workflow' },
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => RoleGateDto)
  roleGate?: RoleGateDto | null;
}

export class UpdateWorkflowDto {
  @ApiPropertyOptional({ maxLength: WORKFLOW_NAME_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(WORKFLOW_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ description: 'an agent member of this workspace (kind agent)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  agentId?: number;

  @ApiPropertyOptional({ type: Number, nullable: true })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  defaultPhoneNumberId?: number | null;

  @ApiPropertyOptional({
    type: RoleGateDto,
    nullable: true,
    description: 'null removes the gate',
    example: { roleIds: [1], message: 'Only coordinators may start this workflow' },
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => RoleGateDto)
  roleGate?: RoleGateDto | null;
}

export class RoleGateResponse implements RoleGate {
  @ApiProperty({ type: [Number] }) roleIds: number[];
  @ApiProperty() message: string;
}

export class WorkflowResponse {
  @ApiProperty() id: number;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty() name: string;
  @ApiProperty() agentId: number;
  @ApiProperty({ type: Number, nullable: true }) defaultPhoneNumberId: number | null;
  @ApiProperty({ type: RoleGateResponse, nullable: true }) roleGate: RoleGate | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: WorkflowEntity): WorkflowResponse {
    return {
      id: row.id,
      uuid: row.uuid,
      name: row.name,
      agentId: row.agentId,
      defaultPhoneNumberId: row.defaultPhoneNumberId,
      roleGate: row.roleGate,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class WorkflowListResponse extends PaginatedResponse(WorkflowResponse) {}
