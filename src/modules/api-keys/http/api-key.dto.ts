import { PaginatedResponse } from '../../../core/http/pagination';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { SCOPE_LEVELS, SCOPE_NAMESPACES } from '../../../core/auth/scopes';
import {
  API_KEY_DEFAULT_DAYS,
  API_KEY_MAX_DAYS,
  API_KEY_MIN_DAYS,
  API_KEY_NAME_MAX,
} from '../domain/api-key';

export class CreateApiKeyDto {
  @ApiProperty({ maxLength: API_KEY_NAME_MAX, example: 'CRM sync' })
  @IsString()
  @MinLength(1)
  @MaxLength(API_KEY_NAME_MAX)
  name: string;

  @ApiProperty({
    type: [String],
    example: ['records:write', 'members:read'],
    description:
      `scopes <namespace>:<${SCOPE_LEVELS.join('|')}> (namespaces: ${SCOPE_NAMESPACES.join(', ')}); in each workspace the key ` +
      "acts with these scopes intersected with its account's role there. Also `account:admin` (manage the account's " +
      'API keys, accept invitations), which no role holds. Each scope must be held by the key that creates it',
  })
  @IsArray()
  @ArrayMaxSize(200)
  // Longer than any scope; short enough that an unknown one can be named in the detail.
  @MaxLength(64, { each: true })
  @IsString({ each: true })
  scopes: string[];

  @ApiPropertyOptional({
    minimum: API_KEY_MIN_DAYS,
    maximum: API_KEY_MAX_DAYS,
    default: API_KEY_DEFAULT_DAYS,
    description:
      "days until the key expires; never later than the creating key (403 if asked for); absent: the default, cut to the creating key's expiry",
  })
  @IsOptional()
  @IsInt()
  @Min(API_KEY_MIN_DAYS)
  @Max(API_KEY_MAX_DAYS)
  expiresInDays?: number;
}

export class ApiKeyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    description: 'the start of the secret, to recognise the key by',
    example: 'wsk_3f9a1c0b7d2e',
  })
  prefix: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() createdAt: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty({ nullable: true, type: String, description: 'to the minute' }) lastUsedAt: string | null;
  @ApiProperty({ enum: ['active', 'expired'] }) status: 'active' | 'expired';
}

export class CreatedApiKeyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'wsk_3f9a1c0b7d2e' }) prefix: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() createdAt: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty({
    description:
      'the full key; shown this once only — store it now. Send it as "Authorization: Bearer <secret>"',
  })
  secret: string;
}

export class ApiKeyListResponse extends PaginatedResponse(ApiKeyResponse) {}

export const displayPrefix = (prefix: string): string => `wsk_${prefix}`;
