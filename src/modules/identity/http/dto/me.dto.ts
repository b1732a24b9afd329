import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { MemberResponse } from './member.dto';

export class AccountResponse {
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ nullable: true }) email: string | null;
  @ApiProperty({ nullable: true }) phone: string | null;
  @ApiProperty({ nullable: true }) name: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class MembershipWorkspace {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class MembershipRole {
  @ApiProperty() id: number;
  @ApiProperty({ nullable: true }) name: string | null;
}

export class MembershipResponse {
  @ApiProperty({ type: MembershipWorkspace }) workspace: MembershipWorkspace;
  @ApiProperty({ type: MemberResponse }) member: MemberResponse;
  @ApiProperty({ type: MembershipRole }) role: MembershipRole;
}

export class MeResponse {
  @ApiProperty({ format: 'uuid', description: "the account's uuid (as account.uuid)" }) uuid: string;
  @ApiProperty({ nullable: true, description: 'as account.email; with a member token as member.email' })
  email: string | null;
  @ApiProperty({ nullable: true, description: 'as account.phone; with a member token as member.phone' })
  phone: string | null;
  @ApiProperty({ nullable: true, description: 'as account.name; with a member token as member.name' })
  name: string | null;
  @ApiPropertyOptional({
    type: MemberResponse,
    description: 'with a member token: the member it was issued for',
  })
  member?: MemberResponse;
  @ApiProperty({ type: AccountResponse }) account: AccountResponse;
  @ApiProperty({
    type: [MembershipResponse],
    description: 'active memberships; a member token sees only its own',
  })
  memberships: MembershipResponse[];
}

/**
 * PUT /me. With an account credential (API key, OAuth) it edits the account: name,
 * email, phone. With a member token it edits that member's own record in its
 * workspace, notification flags included.
 */
export class UpdateMeDto {
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsString() @MaxLength(200) name?: string | null;
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsString() @MaxLength(254) email?: string | null;
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsString() @MaxLength(64) phone?: string | null;
  @ApiPropertyOptional({ description: 'member tokens only' }) @IsOptional() @IsBoolean() notifySms?: boolean;
  @ApiPropertyOptional({ description: 'member tokens only' })
  @IsOptional()
  @IsBoolean()
  notifyEmail?: boolean;
  @ApiPropertyOptional({ description: 'member tokens only' })
  @IsOptional()
  @IsBoolean()
  notifyVoice?: boolean;
}
