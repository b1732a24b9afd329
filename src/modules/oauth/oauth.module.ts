import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { OAuthTokenCredentialResolver } from './auth/oauth-token.resolver';
import {
  CreateOAuthAppHandler,
  DeleteOAuthAppHandler,
  RotateOAuthAppSecretHandler,
  UpdateOAuthAppHandler,
} from './commands/oauth-app.commands';
import { ApproveOAuthGrantHandler, RevokeOAuthGrantHandler } from './commands/oauth-grant.commands';
import { SetAccountPasswordHandler } from './commands/set-password.command';
import { AuthorizeController } from './http/authorize.controller';
import { OAuthAppsController } from './http/oauth-apps.controller';
import { PasswordController } from './http/password.controller';
import { TokenController } from './http/token.controller';
import { OAuth1764000007700 } from './oauth.migration';
import { OAuthAccountLoginsDropped1764000010310 } from './account-logins-dropped.migration';
import { OAuthProjection } from './projections/oauth.projection';
import { RevokeGrantsWhenMemberLeavesReactor } from './reactors/revoke-grants-when-member-leaves.reactor';
import { GetOAuthAppHandler, ListOAuthAppsHandler } from './queries/oauth-app.queries';
import { BrowserSessions } from './server/browser-session';
import { ClientDirectory } from './server/clients';
import { authorizationServerMetadata, metadataPath } from './server/metadata';
import { SignInLimiter } from './server/sign-in-limiter';
import { SignInService } from './server/sign-in.service';
import { TokenService } from './server/token.service';
import { MEMBER_LEFT_QUEUE, MemberLeftProcessor } from './workers/member-left.processor';

declare module '../../core/features/feature' {
  interface VersionedTables {
    oauth_apps: true;
  }
}

/**
 * Account passwords, OAuth apps (/me/apps) and the OAuth 2.0 authorization server
 * (/oauth/*): sign-in and consent pages, codes with PKCE, rotating refresh tokens,
 * revocation, introspection, dynamic registration, metadata; and the resolver of `wso_`
 * access tokens for core's bearer principal.
 */
@Feature({
  name: 'oauth',
  migrations: [OAuth1764000007700, OAuthAccountLoginsDropped1764000010310],
  versionedResources: ['oauth_apps'],
})
@Module(
  withQueues(
    { queues: [MEMBER_LEFT_QUEUE], processors: [MemberLeftProcessor] },
    {
      controllers: [OAuthAppsController, PasswordController, AuthorizeController, TokenController],
      providers: [
        OAuthProjection,
        RevokeGrantsWhenMemberLeavesReactor,
        OAuthTokenCredentialResolver,
        SetAccountPasswordHandler,
        CreateOAuthAppHandler,
        UpdateOAuthAppHandler,
        RotateOAuthAppSecretHandler,
        DeleteOAuthAppHandler,
        ApproveOAuthGrantHandler,
        RevokeOAuthGrantHandler,
        ListOAuthAppsHandler,
        GetOAuthAppHandler,
        SignInLimiter,
        SignInService,
        BrowserSessions,
        ClientDirectory,
        TokenService,
      ],
    },
  ),
)
export class OAuthModule implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * RFC 8414 §3.1 puts the metadata of the issuer `https://host/api/v2` at
   * `https://host/.well-known/oauth-authorization-server/api/v2`, outside the API prefix:
   * served here as a plain route (public, the same document as under the prefix).
   */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    const issuer = this.config.publicBaseUrl;
    fastify.get(metadataPath(issuer), async (_req, reply) =>
      reply.header('Cache-Control', 'public, max-age=300').send(authorizationServerMetadata(issuer)),
    );
  }
}
