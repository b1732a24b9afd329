import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../../core/http/pagination';
import { MAX_ID } from '../../../../core/http/validation';
import type { InvitationEntity } from '../../projections/member.entities';

export const INVITATION_STATUS_FILTERS = [
  'pending',
  'accepted',
  'declined',
  'revoked',
  'expired',
  'all',
] as const;

export class CreateInvitationDto {
  @ApiProperty() @IsString() @MaxLength(254) email: string;
  @ApiPropertyOptional({
    description:
      "role the invitee gets (default: the workspace's default role for new members); a person cannot be invited as Agent",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberRoleId?: number;
}

export class ListInvitationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: INVITATION_STATUS_FILTERS, default: 'all' })
  @IsOptional()
  @IsIn(INVITATION_STATUS_FILTERS)
  status?: (typeof INVITATION_STATUS_FILTERS)[number];
}

export class InvitationResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) workspaceId: string;
  @ApiProperty() email: string;
  @ApiProperty() memberRoleId: number;
  @ApiProperty({ enum: ['pending', 'accepted', 'declined', 'revoked', 'expired'] }) status: string;
  @ApiProperty({ nullable: true }) invitedByMemberId: number | null;
  @ApiProperty({ nullable: true, description: 'the member the invitation became' }) memberId: number | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty({ nullable: true }) acceptedAt: string | null;
  @ApiProperty({ nullable: true }) revokedAt: string | null;

  static of(row: InvitationEntity, now = Date.now()): InvitationResponse {
    const expired = row.status === 'pending' && row.expiresAt.getTime() <= now;
    return {
      id: row.id,
      workspaceId: row.workspaceId,
      email: row.email,
      memberRoleId: row.memberRoleId,
      status: expired ? 'expired' : row.status,
      invitedByMemberId: row.invitedByMemberId,
      memberId: row.memberId,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
      acceptedAt: row.acceptedAt?.toISOString() ?? null,
      revokedAt: row.revokedAt?.toISOString() ?? null,
    };
  }
}

export class InvitationListResponse extends PaginatedResponse(InvitationResponse) {}

/** GET /me/invitations: the standard list envelope, like every other list. */
export class MyInvitationsResponse extends PaginatedResponse(InvitationResponse) {}
