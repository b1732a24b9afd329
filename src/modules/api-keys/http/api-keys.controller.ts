import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { SelfAccess } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { CreateApiKeyCommand, CreatedApiKey } from '../commands/create-api-key.command';
import { RevokeApiKeyCommand } from '../commands/revoke-api-key.command';
import { checkPermissions } from '../../roles/domain/member-role';
import { API_KEY_DEFAULT_DAYS } from '../domain/api-key';
import { GetApiKeyQuery, ListApiKeysQuery } from '../queries/api-key.queries';
import {
  ApiKeyListResponse,
  ApiKeyResponse,
  CreateApiKeyDto,
  CreatedApiKeyResponse,
  displayPrefix,
} from './api-key.dto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Keys are account-level and managed with a key of the same account. Member tokens
 * (one member of one workspace) and OAuth tokens (a third-party app) must not mint
 * long-lived account credentials, and a key cannot create a key with scopes it lacks.
 */
function requireApiKey(principal: Principal): void {
  if (principal.credential.kind !== 'api_key') {
    throw new ForbiddenError(
      'API keys are managed with an API key of the account; this credential cannot manage them',
    );
  }
}

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
    private readonly consistency: ConsistencyWaiter,
  ) {}

  @Post()
  @SelfAccess()
  @CreatedLocation<CreatedApiKeyResponse>((r) => `/me/api-keys/${seg(r.id)}`)
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyResponse> {
    requireApiKey(principal);
    // Unknown scopes are a 400 naming them; only real scopes the key lacks are a 403.
    const missing = checkPermissions(body.scopes, 'scopes').filter(
      (s) => !grants(principal.credential.scopes, s),
    );
    if (missing.length) {
      throw new ForbiddenError(
        `scopes: this key lacks ${missing.join(', ')}, so a key it creates cannot have ${missing.length > 1 ? 'them' : 'it'}`,
      );
    }
    const { key, secret } = await this.commands.execute<CreateApiKeyCommand, CreatedApiKey>(
      new CreateApiKeyCommand(
        principal.accountUuid,
        body.name,
        body.scopes,
        body.expiresInDays ?? API_KEY_DEFAULT_DAYS,
      ),
    );
    await this.consistency.settle();
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
  @SelfAccess()
  @ApiOkResponse({ type: ApiKeyListResponse })
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto): Promise<ApiKeyListResponse> {
    requireApiKey(principal);
    return this.queries.execute(new ListApiKeysQuery(principal.accountUuid, toPageRequest(query)));
  }

  @Get(':keyId')
  @SelfAccess()
  @ApiOkResponse({ type: ApiKeyResponse })
  get(@CurrentPrincipal() principal: Principal, @Param('keyId') keyId: string): Promise<ApiKeyResponse> {
    requireApiKey(principal);
    return this.queries.execute(new GetApiKeyQuery(principal.accountUuid, keyIdOf(keyId)));
  }

  @Delete(':keyId')
  @SelfAccess()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked: the key is refused from the next request on' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('keyId') keyId: string): Promise<void> {
    requireApiKey(principal);
    await this.commands.execute(new RevokeApiKeyCommand(principal.accountUuid, keyIdOf(keyId)));
  }
}
