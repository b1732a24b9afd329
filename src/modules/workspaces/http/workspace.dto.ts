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
  MinLength,
  ValidateNested,
} from 'class-validator';
import type { WorkspaceEntity } from '../projections/workspace.entity';

export class WorkspaceSettingsDto {
  @ApiPropertyOptional({
    nullable: true,
    description: 'role id given to new members; null: the built-in User role',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  defaultMemberRoleId?: number | null;

  @ApiPropertyOptional({ example: 'Europe/Paris' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'boolean' } })
  @IsOptional()
  @IsObject()
  features?: Record<string, boolean>;
}

export class UpdateWorkspaceDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
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
  const bad = Object.entries(features).find(([, v]) => typeof v !== 'boolean');
  return bad ? `settings.features.${bad[0]}: must be a boolean` : undefined;
}
