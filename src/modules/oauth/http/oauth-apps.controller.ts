import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireAccountScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { ACCOUNT_ADMIN } from '../../../core/auth/scopes';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import {
  CreatedOAuthApp,
  CreateOAuthAppCommand,
  DeleteOAuthAppCommand,
  RotateOAuthAppSecretCommand,
  UpdateOAuthAppCommand,
} from '../commands/oauth-app.commands';
import { GetOAuthAppQuery, ListOAuthAppsQuery } from '../queries/oauth-app.queries';
import {
  CreatedOAuthAppResponse,
  CreateOAuthAppDto,
  OAuthAppListResponse,
  OAuthAppResponse,
  RotatedSecretResponse,
  UpdateOAuthAppDto,
} from './oauth-app.dto';
import { TakesNoBody } from '../../../core/http/input-guard';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function appIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new NotFoundError('App not found');
  return raw.toLowerCase();
}

/** The account's OAuth apps (account settings, "Apps"): all need account:admin. */
@ApiTags('oauth-apps')
@Controller('me/apps')
export class OAuthAppsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  @Post()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @CreatedLocation<CreatedOAuthAppResponse>((r) => `/me/apps/${seg(r.id)}`)
  @ApiCreatedResponse({ type: CreatedOAuthAppResponse })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateOAuthAppDto,
  ): Promise<CreatedOAuthAppResponse> {
    const { app, clientSecret } = await this.commands.execute<CreateOAuthAppCommand, CreatedOAuthApp>(
      new CreateOAuthAppCommand(
        principal.accountUuid,
        body.name,
        body.redirectUris,
        body.scopes,
        body.mcpServerUrl ?? null,
        body.clientType ?? 'confidential',
      ),
    );
    return {
      id: app.appId,
      clientId: app.clientId,
      name: app.name,
      redirectUris: app.redirectUris,
      scopes: app.scopes,
      mcpServerUrl: app.mcpServerUrl,
      clientType: app.clientType,
      createdAt: app.createdAt,
      updatedAt: app.createdAt,
      clientSecret,
    };
  }

  @Get()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ApiOkResponse({ type: OAuthAppListResponse })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<OAuthAppListResponse> {
    return this.queries.execute(new ListOAuthAppsQuery(principal.accountUuid, toPageRequest(query)));
  }

  @Get(':appId')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ApiOkResponse({ type: OAuthAppResponse })
  get(@CurrentPrincipal() principal: Principal, @Param('appId') appId: string): Promise<OAuthAppResponse> {
    return this.queries.execute(new GetOAuthAppQuery(principal.accountUuid, appIdOf(appId)));
  }

  @Put(':appId')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ConditionalWrite()
  @ApiOkResponse({ type: OAuthAppResponse })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('appId') rawId: string,
    @Body() body: UpdateOAuthAppDto,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<OAuthAppResponse> {
    const appId = appIdOf(rawId);
    const expectedRevision = await this.pin(principal, appId, ifMatch);
    await this.commands.execute(
      new UpdateOAuthAppCommand(
        principal.accountUuid,
        appId,
        { name: body.name, redirectUris: body.redirectUris, scopes: body.scopes },
        expectedRevision,
      ),
    );
    return this.queries.execute(new GetOAuthAppQuery(principal.accountUuid, appId));
  }

  @Post(':appId/rotate-secret')
  @TakesNoBody()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @HttpCode(200)
  @ApiOkResponse({ type: RotatedSecretResponse })
  async rotateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param('appId') rawId: string,
  ): Promise<RotatedSecretResponse> {
    const appId = appIdOf(rawId);
    const clientSecret = await this.commands.execute<RotateOAuthAppSecretCommand, string>(
      new RotateOAuthAppSecretCommand(principal.accountUuid, appId),
    );
    const app = await this.queries.execute<GetOAuthAppQuery, OAuthAppResponse>(
      new GetOAuthAppQuery(principal.accountUuid, appId),
    );
    return { clientId: app.clientId, clientSecret };
  }

  @Delete(':appId')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ConditionalWrite()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted: every grant and token of the app is revoked' })
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('appId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const appId = appIdOf(rawId);
    const expectedRevision = await this.pin(principal, appId, ifMatch);
    await this.commands.execute(new DeleteOAuthAppCommand(principal.accountUuid, appId, expectedRevision));
  }

  /** If-Match → the stream revision to append at; another account's app is 404 first, never 412. */
  private async pin(
    principal: Principal,
    appId: string,
    ifMatch: number[] | undefined,
  ): Promise<bigint | undefined> {
    if (ifMatch === undefined) return undefined;
    await this.queries.execute(new GetOAuthAppQuery(principal.accountUuid, appId));
    return pinnedRevision(this.db, ifMatch, {
      table: 'oauth_apps',
      id: appId,
      notFound: () => new NotFoundError('App not found'),
    });
  }
}
