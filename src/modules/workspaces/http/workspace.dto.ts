import { PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidateNested,
} from 'class-validator';
import { isIanaTimeZone, TIMEZONE_RULE } from '../../../core/time/iana-time-zone';
import { WORKSPACE_NAME_MAX } from '../domain/workspace';
import type { WorkspaceEntity } from '../projections/workspace.entity';

/** Feature flags: a bounded map, so a settings write cannot grow the workspace row without limit. */
export const MAX_FEATURES = 100;
export const MAX_FEATURE_NAME = 64;

function IsIanaTimeZone(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isIanaTimeZone',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: { validate: isIanaTimeZone, defaultMessage: () => TIMEZONE_RULE },
    });
}

export class SmsQuietHoursDto {
  // The time format and start ≠ end are the decider's rules (workspace.ts), with details naming the field.
  @ApiProperty({ example: '21:00', pattern: '^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$' })
  @IsString()
  start: string;

  @ApiProperty({ example: '08:00', pattern: '^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$' })
  @IsString()
  end: string;
}

export class WorkspaceSettingsDto {
  @ApiPropertyOptional({
    nullable: true,
    description:
      'the role new members get, the one whose isDefault is true; a new workspace names its built-in User role, ' +
      'and null sets it back to User (answered as its id)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  defaultMemberRoleId?: number | null;

  @ApiPropertyOptional({
    example: 'Europe/Paris',
    description: 'an IANA time zone, spelled as the tz database does (Europe/Paris, America/New_York, UTC)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsIanaTimeZone()
  timezone?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'boolean' },
    description: `up to ${MAX_FEATURES} flags, names of 1-${MAX_FEATURE_NAME} characters`,
  })
  @IsOptional()
  @IsObject()
  features?: Record<string, boolean>;

  @ApiPropertyOptional({
    type: SmsQuietHoursDto,
    nullable: true,
    description:
      "assistant SMS inside this daily window (local times in the recipient member's time zone, else the " +
      "workspace's; start after end spans midnight) is sent at the window's end; null removes it",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => SmsQuietHoursDto)
  smsQuietHours?: SmsQuietHoursDto | null;
}

export class UpdateWorkspaceDto {
  // The length rule is the decider's (checkWorkspaceName); the schema only documents it.
  @ApiPropertyOptional({ minLength: 1, maxLength: WORKSPACE_NAME_MAX })
  @IsOptional()
  @IsString()
  name?: string;

  @ApiPropertyOptional({ type: WorkspaceSettingsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => WorkspaceSettingsDto)
  settings?: WorkspaceSettingsDto;
}

export class WorkspaceResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty() name: string;
  @ApiProperty() settings: WorkspaceSettingsDto;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: WorkspaceEntity): WorkspaceResponse {
    return {
      id: row.id,
      uuid: row.id,
      name: row.name,
      settings: row.settings,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class WorkspaceListResponse extends PaginatedResponse(WorkspaceResponse) {}

export function validateFeatures(features: Record<string, unknown> | undefined): string | undefined {
  if (!features) return undefined;
  const names = Object.keys(features);
  if (names.length > MAX_FEATURES) return `settings.features: at most ${MAX_FEATURES} flags`;
  const long = names.find((n) => n.length < 1 || n.length > MAX_FEATURE_NAME);
  if (long !== undefined)
    return `settings.features: a flag name must be 1-${MAX_FEATURE_NAME} characters (got ${long.length})`;
  const bad = Object.entries(features).find(([, v]) => typeof v !== 'boolean');
  return bad ? `settings.features.${bad[0]}: must be a boolean` : undefined;
}
