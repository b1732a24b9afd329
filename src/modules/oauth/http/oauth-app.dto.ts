import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PaginatedResponse } from '../../../core/http/pagination';
import { APP_NAME_MAX } from '../domain/oauth-app';
import { OAUTH_SCOPE_MAX, OAUTH_SCOPES, OAUTH_SCOPES_MAX_COUNT } from '../domain/oauth-scopes';
import { REDIRECT_URI_MAX, REDIRECT_URIS_MAX_COUNT } from '../domain/redirect-uri';

const REDIRECT_DOC =
  'absolute https URLs, or http://127.0.0.1 / http://[::1] loopback URLs for native apps (any port matches at authorization time, RFC 8252); matched exactly otherwise';
const SCOPES_DOC = `OAuth scopes the app may ask for: ${OAUTH_SCOPES.join(', ')} (data:X stands for datatypes:X and records:X, task:X for assignments:X), or any <namespace>:<level>`;

export class CreateOAuthAppDto {
  @ApiProperty({ maxLength: APP_NAME_MAX, example: 'CRM assistant' })
  @IsString()
  @MaxLength(APP_NAME_MAX)
  name: string;

  @ApiProperty({ type: [String], maxItems: REDIRECT_URIS_MAX_COUNT, description: REDIRECT_DOC })
  @IsArray()
  @ArrayMaxSize(REDIRECT_URIS_MAX_COUNT)
  @IsString({ each: true })
  @MaxLength(REDIRECT_URI_MAX, { each: true })
  redirectUris: string[];

  @ApiProperty({
    type: [String],
    maxItems: OAUTH_SCOPES_MAX_COUNT,
    description: SCOPES_DOC,
    example: ['data:read'],
  })
  @IsArray()
  @ArrayMaxSize(OAUTH_SCOPES_MAX_COUNT)
  @IsString({ each: true })
  @MaxLength(OAUTH_SCOPE_MAX, { each: true })
  scopes: string[];

  @ApiPropertyOptional({ description: 'the MCP server URL the app serves, if any (https)' })
  @IsOptional()
  @IsString()
  @MaxLength(REDIRECT_URI_MAX)
  mcpServerUrl?: string;

  @ApiPropertyOptional({ enum: ['confidential', 'public'], default: 'confidential' })
  @IsOptional()
  @IsIn(['confidential', 'public'])
  clientType?: 'confidential' | 'public';
}

export class UpdateOAuthAppDto {
  @ApiPropertyOptional({ maxLength: APP_NAME_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(APP_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ type: [String], maxItems: REDIRECT_URIS_MAX_COUNT, description: REDIRECT_DOC })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(REDIRECT_URIS_MAX_COUNT)
  @IsString({ each: true })
  @MaxLength(REDIRECT_URI_MAX, { each: true })
  redirectUris?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: OAUTH_SCOPES_MAX_COUNT, description: SCOPES_DOC })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(OAUTH_SCOPES_MAX_COUNT)
  @IsString({ each: true })
  @MaxLength(OAUTH_SCOPE_MAX, { each: true })
  scopes?: string[];
}

export class OAuthAppResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: 'the OAuth client_id' }) clientId: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) redirectUris: string[];
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ nullable: true, type: String }) mcpServerUrl: string | null;
  @ApiProperty({ enum: ['confidential', 'public'] }) clientType: 'confidential' | 'public';
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class CreatedOAuthAppResponse extends OAuthAppResponse {
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'confidential clients: the client secret, shown this once only (stored hashed); null for public clients',
  })
  clientSecret: string | null;
}

export class RotatedSecretResponse {
  @ApiProperty() clientId: string;
  @ApiProperty({ description: 'the new client secret, shown this once; the old one stops at once' })
  clientSecret: string;
}

export class OAuthAppListResponse extends PaginatedResponse(OAuthAppResponse) {}

export class SetPasswordDto {
  @ApiPropertyOptional({ description: 'required once the account has a password' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  currentPassword?: string;

  @ApiProperty({ minLength: 12, maxLength: 256 })
  @IsString()
  @MaxLength(1024)
  newPassword: string;
}
