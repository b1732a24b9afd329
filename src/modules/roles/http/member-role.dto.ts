import { PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { SCOPE_LEVELS, SCOPE_NAMESPACES } from '../../../core/auth/scopes';
import { ROLE_NAME_MAX } from '../domain/member-role';
import { ACCESS_LEVELS, AccessLevel, FileAccess, SiteAudience } from '../domain/role-access';
import type { MemberRoleEntity } from '../projections/member-role.entity';

const MAX_GRANTS = 1000;
/** Longer than any scope (`member_roles:admin`), short enough that an unknown one can be named in the detail. */
const MAX_SCOPE_LENGTH = 64;
const SCOPE_DESCRIPTION = `scopes <namespace>:<${SCOPE_LEVELS.join('|')}>; namespaces: ${SCOPE_NAMESPACES.join(', ')}`;

export class SiteAudienceDto implements SiteAudience {
  @ApiProperty({ description: 'members of the role are in the audience of every Site' })
  @IsBoolean()
  allSites: boolean;

  @ApiProperty({ type: [Number], description: 'Sites whose audience the role is in (when not allSites)' })
  @IsArray()
  @ArrayMaxSize(MAX_GRANTS)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  siteIds: number[];
}

export class ResourceGrantDto {
  @ApiProperty({ description: 'file or folder id' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  id: number;

  @ApiProperty({ enum: ACCESS_LEVELS })
  @IsIn(ACCESS_LEVELS)
  level: AccessLevel;
}

export class FileAccessDto implements FileAccess {
  @ApiProperty({ type: [ResourceGrantDto] })
  @IsArray()
  @ArrayMaxSize(MAX_GRANTS)
  @ValidateNested({ each: true })
  @Type(() => ResourceGrantDto)
  folders: ResourceGrantDto[];

  @ApiProperty({ type: [ResourceGrantDto] })
  @IsArray()
  @ArrayMaxSize(MAX_GRANTS)
  @ValidateNested({ each: true })
  @Type(() => ResourceGrantDto)
  files: ResourceGrantDto[];
}

export class CreateMemberRoleDto {
  @ApiProperty({ maxLength: ROLE_NAME_MAX, example: 'Care coordinator' })
  @IsString()
  @MinLength(1)
  @MaxLength(ROLE_NAME_MAX)
  name: string;

  @ApiProperty({ type: [String], description: SCOPE_DESCRIPTION, example: ['chats:write', 'members:read'] })
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(MAX_SCOPE_LENGTH, { each: true })
  permissions: string[];

  @ApiPropertyOptional({ type: SiteAudienceDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SiteAudienceDto)
  siteAudience?: SiteAudienceDto;

  @ApiPropertyOptional({ type: FileAccessDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => FileAccessDto)
  fileAccess?: FileAccessDto;

  @ApiPropertyOptional({
    description: 'make this the role new members get (workspace setting defaultMemberRoleId)',
  })
  @IsOptional()
  @IsBoolean()
  isDefault?: boolean;
}

export class UpdateMemberRoleDto {
  @ApiPropertyOptional({ maxLength: ROLE_NAME_MAX, description: 'fixed on built-in roles' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(ROLE_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ type: [String], description: `${SCOPE_DESCRIPTION}; fixed on built-in roles` })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(MAX_SCOPE_LENGTH, { each: true })
  permissions?: string[];

  @ApiPropertyOptional({ type: SiteAudienceDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SiteAudienceDto)
  siteAudience?: SiteAudienceDto;

  @ApiPropertyOptional({ type: FileAccessDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => FileAccessDto)
  fileAccess?: FileAccessDto;

  @ApiPropertyOptional({
    description:
      'true: new members get this role; false on the current default: back to the built-in User role',
  })
  @IsOptional()
  @IsBoolean()
  isDefault?: boolean;
}

export class MergeMemberRolesDto {
  @ApiProperty({ description: 'the built-in role the duplicate is merged into' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  targetRoleId: number;

  @ApiPropertyOptional({
    enum: ['copy', 'discard'],
    default: 'copy',
    description: "what happens to the duplicate's Site audience and Files and Folders access",
  })
  @IsOptional()
  @IsIn(['copy', 'discard'])
  resourceAccess?: 'copy' | 'discard';
}

export class MemberRoleResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) permissions: string[];
  @ApiProperty() isBuiltIn: boolean;
  @ApiProperty({ description: 'the role new members get' }) isDefault: boolean;
  @ApiProperty({ type: SiteAudienceDto }) siteAudience: SiteAudience;
  @ApiProperty({ type: FileAccessDto }) fileAccess: FileAccess;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: MemberRoleEntity, defaultRoleId: number | undefined): MemberRoleResponse {
    return {
      id: row.id,
      name: row.name,
      permissions: row.permissions,
      isBuiltIn: row.builtIn !== null,
      isDefault: row.id === defaultRoleId,
      siteAudience: row.siteAudience,
      fileAccess: row.fileAccess,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class MemberRoleListResponse extends PaginatedResponse(MemberRoleResponse) {}

export class MemberRolesMergedResponse {
  @ApiProperty() sourceRoleId: number;
  @ApiProperty() targetRoleId: number;
  @ApiProperty({ enum: ['copy', 'discard'] }) resourceAccess: 'copy' | 'discard';
  @ApiProperty({ type: [Number], description: 'members moved onto the target role, archived ones included' })
  memberIds: number[];
  @ApiProperty({ type: [String], description: 'unclaimed invitations moved onto the target role' })
  invitationIds: string[];
  @ApiProperty({ description: "the duplicate was the workspace's default role; the target is now" })
  workspaceDefaultMoved: boolean;
  @ApiProperty({ type: MemberRoleResponse, description: 'the target role after the merge' })
  targetRole: MemberRoleResponse;
}
