import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { DESCRIPTION_MAX, TOOLKIT_NAME_MAX, TOOLKIT_SLUG_MAX } from '../domain/toolkit';
import type { CustomToolkitEntity } from '../projections/toolkit.entities';

const SLUG_DOC = {
  example: 'crm-tools',
  maxLength: TOOLKIT_SLUG_MAX,
  pattern: '^[a-z0-9][a-z0-9_-]*$',
  description: 'unique per workspace (409 when taken)',
};

export class CreateCustomToolkitDto {
  @ApiProperty({ maxLength: TOOLKIT_NAME_MAX, example: 'CRM tools' })
  @IsString()
  @MinLength(1)
  @MaxLength(TOOLKIT_NAME_MAX)
  name: string;

  @ApiProperty(SLUG_DOC)
  @IsString()
  @MinLength(1)
  @MaxLength(TOOLKIT_SLUG_MAX)
  slug: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_MAX)
  description?: string | null;
}

export class UpdateCustomToolkitDto {
  @ApiPropertyOptional({ maxLength: TOOLKIT_NAME_MAX, example: 'CRM tools' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TOOLKIT_NAME_MAX)
  name?: string;

  @ApiPropertyOptional(SLUG_DOC)
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TOOLKIT_SLUG_MAX)
  slug?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_MAX)
  description?: string | null;
}

export class ListCustomToolkitsQueryDto extends PageQueryDto {}

export class CustomToolkitResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ description: 'whether its tools are offered to agents (POST .../enable, .../disable)' })
  enabled: boolean;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: CustomToolkitEntity): CustomToolkitResponse {
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      description: row.description,
      enabled: row.enabled,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class CustomToolkitListResponse extends PaginatedResponse(CustomToolkitResponse) {}
