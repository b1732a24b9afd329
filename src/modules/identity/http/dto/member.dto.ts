import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../../core/http/pagination';
import { MAX_ID } from '../../../../core/http/validation';
import { MAX_IMPORT_ROWS } from '../../commands/import-members.command';
import { MAX_AGENT_INSTRUCTIONS, MAX_AGENT_MODEL } from '../../domain/agent-settings';
import { memberView, type MemberSnapshot } from '../../domain/member.events';

export const MEMBER_STATUS_FILTERS = ['active', 'archived', 'all'] as const;

export class MemberResponse {
  @ApiProperty() id: number;
  @ApiProperty({ format: 'uuid' }) workspaceId: string;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    description: 'null for a contact that has not signed up (imported)',
  })
  accountUuid: string | null;
  @ApiProperty({ nullable: true }) email: string | null;
  @ApiProperty({ nullable: true, description: 'E.164' }) phone: string | null;
  @ApiProperty({ nullable: true }) name: string | null;
  @ApiProperty({ nullable: true }) externalId: string | null;
  @ApiProperty() memberRoleId: number;
  @ApiProperty({ enum: ['person', 'agent'] }) kind: 'person' | 'agent';
  @ApiProperty({ enum: ['active', 'archived'] }) status: 'active' | 'archived';
  @ApiProperty({ description: 'consent to SMS' }) notifySms: boolean;
  @ApiProperty() notifyEmail: boolean;
  @ApiProperty() notifyVoice: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "IANA time zone (SMS quiet hours use it); null: the workspace's",
  })
  timezone: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: `agent members: the model their chats' assistant replies with (null: ASSISTANT_MODEL); always null for a person`,
  })
  agentModel: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: `agent members: instructions put into the system prompt of their chats' assistant; always null for a person`,
  })
  agentInstructions: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(m: MemberSnapshot): MemberResponse {
    return memberView(m);
  }
}

export class MemberListResponse extends PaginatedResponse(MemberResponse) {}

export class ListMembersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'exact match, case-insensitive' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ description: 'international form and nothing else; matched in E.164' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  phone?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(255)
  externalId?: string;

  @ApiPropertyOptional({ description: 'member role id' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  roleId?: number;

  @ApiPropertyOptional({ description: 'another name for roleId; giving both with different values is 400' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberRoleId?: number;

  @ApiPropertyOptional({ enum: MEMBER_STATUS_FILTERS, default: 'active' })
  @IsOptional()
  @IsIn(MEMBER_STATUS_FILTERS)
  status?: (typeof MEMBER_STATUS_FILTERS)[number];
}

/** PUT /w/{wid}/members/{memberId}: every field optional; null clears name, email, phone or externalId. */
export class UpdateMemberDto {
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsString() @MaxLength(200) name?: string | null;
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsString() @MaxLength(254) email?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    description: 'international form and nothing else (no extension); stored in E.164',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  phone?: string | null;
  @ApiPropertyOptional({ description: 'consent to SMS' }) @IsOptional() @IsBoolean() notifySms?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() notifyEmail?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() notifyVoice?: boolean;
  @ApiPropertyOptional({
    nullable: true,
    example: 'America/New_York',
    description: "IANA time zone (SMS quiet hours use it); null: the workspace's",
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: MAX_AGENT_MODEL,
    example: 'gpt-4o-mini',
    description:
      "agent members only (a person's is 400): the model of the assistant's replies in chats of workflows this agent runs; null: ASSISTANT_MODEL. Needs members:write",
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_AGENT_MODEL)
  agentModel?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    maxLength: MAX_AGENT_INSTRUCTIONS,
    description:
      "agent members only (a person's is 400): instructions put into the assistant's system prompt in chats of workflows this agent runs; null removes them. Needs members:write",
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_AGENT_INSTRUCTIONS)
  agentInstructions?: string | null;
  @ApiPropertyOptional({ description: 'needs members:write, also on your own record' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberRoleId?: number;
  @ApiPropertyOptional({ nullable: true, description: 'needs members:write, also on your own record' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  externalId?: string | null;
}

export class ImportMembersDto {
  @ApiProperty({
    description:
      'up to 10,000 rows: email, phone, name, externalId, memberRoleId, kind (person|agent), notifySms, notifyEmail, notifyVoice, and for agents agentModel and agentInstructions',
    type: 'array',
    items: { type: 'object' },
    maxItems: MAX_IMPORT_ROWS,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_IMPORT_ROWS)
  members: unknown[];

  @ApiPropertyOptional({
    default: false,
    description: 'update members matched by externalId, email or phone instead of failing the row',
  })
  @IsOptional()
  @IsBoolean()
  upsert?: boolean;
}

export class ImportResultItemResponse {
  @ApiProperty() index: number;
  @ApiProperty({ enum: ['created', 'updated', 'unchanged'] }) status: string;
  @ApiProperty() memberId: number;
  @ApiProperty({ nullable: true }) externalId: string | null;
}

export class ImportErrorResponse {
  @ApiProperty() index: number;
  @ApiProperty() detail: string;
}

export class ImportMembersResponse {
  @ApiProperty() success: boolean;
  @ApiProperty() totalCount: number;
  @ApiProperty() importedCount: number;
  @ApiProperty({ type: [ImportResultItemResponse] }) results: ImportResultItemResponse[];
  @ApiProperty({ type: [ImportErrorResponse], nullable: true }) errors: ImportErrorResponse[] | null;
}
