import { HttpCode, Body, Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiExcludeEndpoint,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../../core/auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { DomainError, TooManyRequestsError } from '../../../core/http/domain-errors';
import { AcceptBody } from '../../../core/http/body-parsing';
import { ListMembershipsOfAccountQuery } from '../../identity';
import { GetWorkspaceNamesQuery } from '../../workspaces';
import { ApproveOAuthGrantCommand } from '../commands/oauth-grant.commands';
import {
  AuthorizationRequest,
  Checked,
  checkAuthorizationRequest,
  redirectWith,
} from '../server/authorization-request';
import {
  BrowserSessions,
  csrfMatches,
  CSRF_COOKIE,
  csrfTokenFor,
  readCookie,
} from '../server/browser-session';
import { ClientDirectory } from '../server/clients';
import { consentPage, errorPage, signInPage } from '../server/pages';
import { SignInService } from '../server/sign-in.service';
import { TokenService } from '../server/token.service';

type Params = Record<string, unknown>;

/**
 * A path-absolute address of another OAuth page, from the path this request came in on:
 * the pages work at whatever address the browser reached them (behind a proxy too), not
 * only at PUBLIC_BASE_URL.
 */
function oauthPath(req: FastifyRequest, page: string): string {
  const path = req.url.split('?')[0];
  const at = path.lastIndexOf('/oauth/');
  return `${at >= 0 ? path.slice(0, at) : ''}/oauth/${page}`;
}

/**
 * GET /oauth/authorize and its two forms (sign-in, consent). The request is checked again
 * on every step from the hidden fields, so no step trusts an earlier one's page.
 */
@ApiTags('oauth')
@Controller('oauth')
export class AuthorizeController {
  constructor(
    private readonly clients: ClientDirectory,
    private readonly sessions: BrowserSessions,
    private readonly signIns: SignInService,
    private readonly tokens: TokenService,
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('authorize')
  @Public()
  @ApiOperation({
    summary: 'Authorize an application',
    description:
      'OAuth 2.0 authorization endpoint (RFC 6749 §4.1, PKCE S256 per RFC 7636): serves the sign-in and consent pages, then redirects to the redirect URI with `code`, `state` and `iss`, or `error`. An unknown client or unregistered redirect URI is an error page (JSON `{detail}` unless the client accepts HTML), never a redirect.',
  })
  @ApiProduces('text/html')
  @ApiQuery({ name: 'response_type', required: true, schema: { type: 'string', enum: ['code'] } })
  @ApiQuery({ name: 'client_id', required: true, schema: { type: 'string' } })
  @ApiQuery({ name: 'redirect_uri', required: true, schema: { type: 'string' } })
  @ApiQuery({ name: 'scope', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'state', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'code_challenge', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'code_challenge_method', required: false, schema: { type: 'string', enum: ['S256'] } })
  @ApiQuery({
    name: 'resource',
    required: false,
    description:
      "RFC 8707 resource indicator: this service's base URL or a URL under it (its /mcp endpoint); another is sent back as invalid_target",
    schema: { type: 'string', format: 'uri' },
  })
  @ApiResponse({ status: 200, description: 'the sign-in or consent page (HTML)' })
  @ApiResponse({ status: 302, description: 'back to the redirect URI with an error' })
  async authorize(
    @Query() query: Params,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const checked = await this.check(query);
    if (!checked.ok) return this.refuse(checked, req, reply);
    const session = await this.sessions.current(req);
    if (!session) return this.html(reply, 200, this.signIn(req, reply, checked.request));
    return this.html(reply, 200, await this.consent(req, checked.request, session));
  }

  @Post('authorize/sign-in')
  // A page (200) or a redirect (303/302), never a created resource.
  @HttpCode(200)
  @Public()
  @AcceptBody('application/x-www-form-urlencoded')
  @ApiExcludeEndpoint()
  async signInForm(
    @Body() body: Params,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const form = body ?? {};
    const checked = await this.check(form);
    if (!checked.ok) return this.refuse(checked, req, reply);
    const request = checked.request;
    if (!csrfMatches(readCookie(req, CSRF_COOKIE), form.csrf_token))
      return this.html(
        reply,
        403,
        this.signIn(req, reply, request, 'The form expired; please sign in again.'),
      );
    const email = typeof form.email === 'string' ? form.email : '';
    const password = typeof form.password === 'string' ? form.password : '';
    let accountUuid: string;
    try {
      accountUuid = await this.signIns.signIn(email, password, req.ip);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err instanceof TooManyRequestsError)
        void reply.header('Retry-After', String(err.retryAfterSeconds));
      return this.html(reply, err.status, this.signIn(req, reply, request, err.message, email));
    }
    await this.sessions.start(reply, accountUuid);
    // Post/redirect/get: back to the authorization request, now with a session.
    void reply
      .code(303)
      .header('Location', `${oauthPath(req, 'authorize')}?${new URLSearchParams(request.params).toString()}`);
    return '';
  }

  @Post('authorize/consent')
  // A page (200) or a redirect (303/302), never a created resource.
  @HttpCode(200)
  @Public()
  @AcceptBody('application/x-www-form-urlencoded')
  @ApiExcludeEndpoint()
  async consentForm(
    @Body() body: Params,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const form = body ?? {};
    const checked = await this.check(form);
    if (!checked.ok) return this.refuse(checked, req, reply);
    const request = checked.request;
    const session = await this.sessions.current(req);
    if (!session) return this.html(reply, 200, this.signIn(req, reply, request, 'Please sign in again.'));
    if (!csrfMatches(session.cookie, form.csrf_token))
      return this.html(
        reply,
        403,
        errorPage('The form expired or did not come from this site; start again.'),
      );
    const iss = this.config.publicBaseUrl;
    if (form.decision !== 'approve') {
      return this.redirect(
        reply,
        303,
        redirectWith(request.redirectUri, {
          error: 'access_denied',
          error_description: 'The person denied the request',
          state: request.state,
          iss,
        }),
      );
    }
    const workspaceId = typeof form.workspace_id === 'string' ? form.workspace_id.toLowerCase() : '';
    const workspaces = await this.workspacesOf(session.accountUuid);
    if (!workspaces.some((w) => w.id === workspaceId)) {
      return this.html(reply, 400, await this.consent(req, request, session, workspaces));
    }
    const grantId = await this.commands.execute<ApproveOAuthGrantCommand, string>(
      new ApproveOAuthGrantCommand(
        { appId: request.client.id, clientId: request.client.client_id, scopes: request.client.scopes },
        session.accountUuid,
        workspaceId,
        request.scopes,
      ),
    );
    const code = await this.tokens.issueCode(
      grantId,
      request.client.id,
      request.redirectUri,
      request.codeChallenge,
    );
    return this.redirect(reply, 303, redirectWith(request.redirectUri, { code, state: request.state, iss }));
  }

  private async check(raw: Params): Promise<Checked> {
    const clientId = typeof raw.client_id === 'string' ? raw.client_id : undefined;
    return checkAuthorizationRequest(raw, await this.clients.find(clientId), this.config.publicBaseUrl);
  }

  private refuse(checked: Exclude<Checked, { ok: true }>, req: FastifyRequest, reply: FastifyReply): unknown {
    if ('page' in checked) {
      // Never a redirect: the redirect URI is not known to be the client's.
      if ((req.headers.accept ?? '').includes('text/html'))
        return this.html(reply, 400, errorPage(checked.page));
      void reply.code(400).header('Cache-Control', 'no-store');
      return { detail: checked.page, error: 'invalid_request', error_description: checked.page };
    }
    const r = checked.redirect;
    return this.redirect(
      reply,
      302,
      redirectWith(r.uri, {
        error: r.error,
        error_description: r.description,
        state: r.state,
        iss: this.config.publicBaseUrl,
      }),
    );
  }

  private signIn(
    req: FastifyRequest,
    reply: FastifyReply,
    request: AuthorizationRequest,
    error?: string,
    email?: string,
  ): string {
    return signInPage({
      action: oauthPath(req, 'authorize/sign-in'),
      appName: request.client.name,
      params: request.params,
      csrf: this.sessions.signInCsrf(req, reply),
      error,
      email,
    });
  }

  private async consent(
    req: FastifyRequest,
    request: AuthorizationRequest,
    session: { accountUuid: string; cookie: string },
    workspaces?: { id: string; name: string }[],
  ): Promise<string> {
    return consentPage({
      action: oauthPath(req, 'authorize/consent'),
      appName: request.client.name,
      scopes: request.scopes,
      workspaces: workspaces ?? (await this.workspacesOf(session.accountUuid)),
      params: request.params,
      csrf: csrfTokenFor(session.cookie),
    });
  }

  private async workspacesOf(accountUuid: string): Promise<{ id: string; name: string }[]> {
    const ids = await this.queries.execute<ListMembershipsOfAccountQuery, string[]>(
      new ListMembershipsOfAccountQuery(accountUuid),
    );
    const names = await this.queries.execute<GetWorkspaceNamesQuery, Map<string, string>>(
      new GetWorkspaceNamesQuery(ids),
    );
    return ids.map((id) => ({ id, name: names.get(id) ?? id })).sort((a, b) => a.name.localeCompare(b.name));
  }

  private html(reply: FastifyReply, status: number, page: string): string {
    void reply
      .code(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('X-Frame-Options', 'DENY')
      .header(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      )
      .header('Referrer-Policy', 'no-referrer');
    return page;
  }

  private redirect(reply: FastifyReply, status: number, location: string): string {
    void reply.code(status).header('Location', location).header('Cache-Control', 'no-store');
    return '';
  }
}
