import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { INPUT_SCHEMA_MAX_LENGTH } from '../domain/input-schema';
import {
  DESCRIPTION_MAX,
  TOOL_CHAT_MODEL_MAX,
  TOOL_DISPLAY_NAME_MAX,
  TOOL_PROMPT_MAX,
} from '../domain/toolkit';
import type { CustomToolEntity } from '../projections/toolkit.entities';

const NAME_DOC = {
  example: 'lookup_order',
  maxLength: 64,
  pattern: '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$',
  description: 'unique in the toolkit, whatever the case (409 when taken)',
};

const SCHEMA_DOC = {
  type: 'object',
  additionalProperties: true,
  example: {
    type: 'object',
    properties: { orderId: { type: 'string', description: 'the order number' } },
    required: ['orderId'],
  },
  description:
    `a JSON Schema (2020-12, or draft-07 when its $schema says so) whose root is type "object", ` +
    `at most ${INPUT_SCHEMA_MAX_LENGTH} characters as JSON; unknown keywords, references outside the ` +
    'schema and "required" names that are not declared properties are refused (400 naming the schema path). ' +
    'Default: no arguments',
} as const;

export class CreateCustomToolDto {
  @ApiProperty(NAME_DOC)
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  name: string;

  @ApiPropertyOptional({ maxLength: TOOL_DISPLAY_NAME_MAX, description: 'created without one: the name' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TOOL_DISPLAY_NAME_MAX)
  displayName?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_MAX)
  description?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: TOOL_PROMPT_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(TOOL_PROMPT_MAX)
  prompt?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: TOOL_CHAT_MODEL_MAX,
    example: 'gpt-4o-mini',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TOOL_CHAT_MODEL_MAX)
  chatModel?: string | null;

  @ApiPropertyOptional(SCHEMA_DOC)
  @IsOptional()
  @IsObject()
  inputSchema?: Record<string, unknown>;
}

/** Every field of the create body, each optional: a PUT changes only what it names. */
export class UpdateCustomToolDto extends PartialType(CreateCustomToolDto) {}

export class ListCustomToolsQueryDto extends PageQueryDto {}

export class CustomToolResponse {
  @ApiProperty() id: number;
  @ApiProperty() toolkitId: number;
  @ApiProperty() name: string;
  @ApiProperty() displayName: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true }) prompt: string | null;
  @ApiProperty({ type: String, nullable: true }) chatModel: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) inputSchema: Record<string, unknown>;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: CustomToolEntity): CustomToolResponse {
    return {
      id: row.id,
      toolkitId: row.toolkitId,
      name: row.name,
      displayName: row.displayName,
      description: row.description,
      prompt: row.prompt,
      chatModel: row.chatModel,
      inputSchema: row.inputSchema as Record<string, unknown>,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class CustomToolListResponse extends PaginatedResponse(CustomToolResponse) {}
