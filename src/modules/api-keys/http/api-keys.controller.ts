import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireAccountScope } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { ACCOUNT_ADMIN } from '../../../core/auth/scopes';
import { NotFoundError } from '../../../core/http/domain-errors';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { CreateApiKeyCommand, CreatedApiKey } from '../commands/create-api-key.command';
import { RevokeApiKeyCommand } from '../commands/revoke-api-key.command';
import { GetApiKeyQuery, ListApiKeysQuery } from '../queries/api-key.queries';
import {
  ApiKeyListResponse,
  ApiKeyResponse,
  CreateApiKeyDto,
  CreatedApiKeyResponse,
  displayPrefix,
} from './api-key.dto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function keyIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new NotFoundError('API key not found');
  return raw.toLowerCase();
}

@ApiTags('api-keys')
@Controller('me/api-keys')
export class ApiKeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @CreatedLocation<CreatedApiKeyResponse>((r) => `/me/api-keys/${seg(r.id)}`)
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyResponse> {
    const { key, secret } = await this.commands.execute<CreateApiKeyCommand, CreatedApiKey>(
      new CreateApiKeyCommand(
        principal.accountUuid,
        principal.credential.credentialId,
        body.name,
        body.scopes,
        body.expiresInDays,
        principal.credential.kind,
      ),
    );
    return {
      id: key.keyId,
      name: key.name,
      prefix: displayPrefix(key.prefix),
      scopes: key.scopes,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
      secret,
    };
  }

  @Get()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ApiOkResponse({ type: ApiKeyListResponse })
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto): Promise<ApiKeyListResponse> {
    return this.queries.execute(
      new ListApiKeysQuery(principal.accountUuid, toPageRequest(query), principal.credential.kind),
    );
  }

  @Get(':keyId')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ApiOkResponse({ type: ApiKeyResponse })
  get(@CurrentPrincipal() principal: Principal, @Param('keyId') keyId: string): Promise<ApiKeyResponse> {
    return this.queries.execute(
      new GetApiKeyQuery(principal.accountUuid, keyIdOf(keyId), principal.credential.kind),
    );
  }

  @Delete(':keyId')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked: the key is refused from the next request on' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('keyId') keyId: string): Promise<void> {
    await this.commands.execute(
      new RevokeApiKeyCommand(principal.accountUuid, keyIdOf(keyId), principal.credential.kind),
    );
  }
}
