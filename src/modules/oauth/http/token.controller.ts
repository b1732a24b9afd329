import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../../core/auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { DomainError } from '../../../core/http/domain-errors';
import { AcceptBody } from '../../../core/http/body-parsing';
import { CreatedOAuthApp, CreateOAuthAppCommand } from '../commands/oauth-app.commands';
import { OAUTH_SCOPES } from '../domain/oauth-scopes';
import { resourceProblem } from '../domain/resource-indicator';
import { ClientDirectory } from '../server/clients';
import { authorizationServerMetadata } from '../server/metadata';
import { OAuthError, param } from '../server/oauth-error';
import { TokenService } from '../server/token.service';

type Params = Record<string, unknown>;

const FORM_BODY = {
  schema: {
    type: 'object',
    additionalProperties: { type: 'string' },
  },
} as const;

/**
 * The authorization server's machine endpoints: token (RFC 6749 §3.2), revocation
 * (RFC 7009), introspection (RFC 7662), dynamic client registration (RFC 7591) and the
 * metadata document (RFC 8414). Their errors are OAuth's `{error, error_description}`
 * (with the service's `{detail}` beside them), and nothing they answer is cached.
 */
@ApiTags('oauth')
@Controller()
export class TokenController {
  constructor(
    private readonly clients: ClientDirectory,
    private readonly tokens: TokenService,
    private readonly commands: CommandBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('oauth/token')
  @Public()
  @AcceptBody('application/x-www-form-urlencoded')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Issue OAuth tokens',
    description:
      "Form-encoded. `grant_type=authorization_code` (`code`, `redirect_uri`, `code_verifier`) or `refresh_token` (`refresh_token`, optional narrower `scope`), optional `resource` (RFC 8707: this service's base URL or a URL under it, such as its /mcp endpoint; another is `invalid_target`), with client authentication by HTTP Basic or `client_id` + `client_secret` (public clients: `client_id`). Answers `access_token`, `token_type`, `expires_in`, `refresh_token`, `scope`; errors per RFC 6749 §5.2 (`invalid_client` is 401 with `WWW-Authenticate: Basic`).",
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody(FORM_BODY)
  @ApiOkResponse({ description: 'the tokens' })
  token(@Body() body: Params, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.answer(reply, async () => {
      const form = body ?? {};
      const grantType = param(form, 'grant_type', true);
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
        throw new OAuthError('unsupported_grant_type', 'grant_type: authorization_code or refresh_token');
      const client = await this.clients.authenticate(form, req.headers.authorization);
      const resource = param(form, 'resource');
      const wrongTarget = resource ? resourceProblem(resource, this.config.publicBaseUrl) : undefined;
      if (wrongTarget) throw new OAuthError('invalid_target', wrongTarget);
      if (grantType === 'authorization_code')
        return this.tokens.exchangeCode(
          client,
          param(form, 'code', true),
          param(form, 'redirect_uri'),
          param(form, 'code_verifier'),
        );
      return this.tokens.refresh(client, param(form, 'refresh_token', true), param(form, 'scope'));
    });
  }

  @Post('oauth/revoke')
  @Public()
  @AcceptBody('application/x-www-form-urlencoded')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke an OAuth token',
    description:
      'RFC 7009, form-encoded `token` (and optional `token_type_hint`) with client authentication. Revoking either token of a grant ends the grant; unknown tokens and tokens of other clients answer 200 too.',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody(FORM_BODY)
  revoke(@Body() body: Params, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.answer(reply, async () => {
      const form = body ?? {};
      const client = await this.clients.authenticate(form, req.headers.authorization);
      await this.tokens.revoke(client, param(form, 'token', true));
      return {};
    });
  }

  @Post('oauth/introspect')
  @Public()
  @AcceptBody('application/x-www-form-urlencoded')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Introspect an OAuth token',
    description:
      "RFC 7662, form-encoded `token` with a confidential client's authentication: `{active, scope, client_id, token_type, exp, iat, sub, iss, workspace_id}` for the client's own live tokens, `{active: false}` for anything else.",
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody(FORM_BODY)
  introspect(
    @Body() body: Params,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.answer(reply, async () => {
      const form = body ?? {};
      const client = await this.clients.authenticate(form, req.headers.authorization);
      if (client.client_type !== 'confidential')
        throw new OAuthError('invalid_client', 'Introspection needs a confidential client', 401);
      return this.tokens.introspect(client, param(form, 'token', true));
    });
  }

  @Post('oauth/register')
  @Public()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register an OAuth client',
    description:
      'RFC 7591 dynamic client registration (JSON): `redirect_uris`, `client_name`, `scope`, `token_endpoint_auth_method` (`none`; `client_secret_basic` or `client_secret_post` only when OAUTH_REGISTRATION_CONFIDENTIAL is true), `grant_types`, `response_types`.',
  })
  @ApiBody({ schema: { type: 'object', additionalProperties: true } })
  register(@Body() body: Params, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.answer(reply, () => this.registerClient(body ?? {}), 201);
  }

  @Get('.well-known/oauth-authorization-server')
  @Public()
  @ApiOperation({
    summary: 'Get authorization server metadata',
    description:
      'RFC 8414 metadata of the issuer PUBLIC_BASE_URL (also served at its RFC 8414 location, /.well-known/oauth-authorization-server/<issuer path>).',
  })
  metadata(): Record<string, unknown> {
    return authorizationServerMetadata(this.config.publicBaseUrl);
  }

  private async registerClient(body: Params): Promise<Record<string, unknown>> {
    const meta = (field: string, problem: string): OAuthError =>
      new OAuthError('invalid_client_metadata', `${field}: ${problem}`);
    const uris = body.redirect_uris;
    if (!Array.isArray(uris) || !uris.length || uris.some((u) => typeof u !== 'string'))
      throw new OAuthError('invalid_redirect_uri', 'redirect_uris: must list at least one URI');
    const method = body.token_endpoint_auth_method ?? 'none';
    if (!['none', 'client_secret_basic', 'client_secret_post'].includes(method as string))
      throw meta('token_endpoint_auth_method', 'none, client_secret_basic or client_secret_post');
    if (method !== 'none' && !this.config.oauthRegistrationConfidential)
      throw meta('token_endpoint_auth_method', 'only public clients (none) may register themselves here');
    const grants = body.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
      throw meta('grant_types', 'authorization_code and refresh_token are supported');
    const responses = body.response_types ?? ['code'];
    if (!Array.isArray(responses) || responses.some((r) => r !== 'code'))
      throw meta('response_types', 'only code is supported');
    const scope = body.scope ?? OAUTH_SCOPES.join(' ');
    if (typeof scope !== 'string') throw meta('scope', 'must be a space-separated string');
    const name = body.client_name ?? 'Unnamed client';
    if (typeof name !== 'string') throw meta('client_name', 'must be a string');
    let created: CreatedOAuthApp;
    try {
      created = await this.commands.execute<CreateOAuthAppCommand, CreatedOAuthApp>(
        new CreateOAuthAppCommand(
          null,
          name,
          uris as string[],
          scope.split(' ').filter((s) => s),
          null,
          method === 'none' ? 'public' : 'confidential',
          true,
        ),
      );
    } catch (err) {
      if (!(err instanceof DomainError) || err.status !== 400) throw err;
      if (err.message.startsWith('redirectUris')) throw new OAuthError('invalid_redirect_uri', err.message);
      throw new OAuthError('invalid_client_metadata', err.message);
    }
    const app = created.app;
    return {
      client_id: app.clientId,
      client_id_issued_at: Math.floor(Date.parse(app.createdAt) / 1000),
      ...(created.clientSecret ? { client_secret: created.clientSecret, client_secret_expires_at: 0 } : {}),
      client_name: app.name,
      redirect_uris: app.redirectUris,
      scope: app.scopes.join(' '),
      token_endpoint_auth_method: method,
      grant_types: grants,
      response_types: responses,
    };
  }

  /** Runs an endpoint; OAuth errors become their RFC bodies, and nothing is cached either way. */
  private async answer(reply: FastifyReply, run: () => Promise<unknown>, status = 200): Promise<unknown> {
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    try {
      const body = await run();
      void reply.code(status);
      return body;
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      void reply.code(err.status);
      if (err.status === 401) void reply.header('WWW-Authenticate', 'Basic realm="oauth", charset="UTF-8"');
      return err.body();
    }
  }
}
