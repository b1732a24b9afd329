/**
 * The oauth feature's public surface: what other features (and the CLI) may use.
 * Everything else under modules/oauth is internal (src/app.features.spec.ts enforces it).
 */
export { SetAccountPasswordCommand } from './commands/set-password.command';
export { accountPasswordStream, oauthAppStream, oauthGrantStream } from './domain/oauth.events';
export type {
  AccountPasswordSet,
  OAuthAppCreated,
  OAuthAppDeleted,
  OAuthAppSecretRotated,
  OAuthAppUpdated,
  OAuthGrantApproved,
  OAuthGrantRevoked,
} from './domain/oauth.events';
export { expandOAuthScopes, OAUTH_SCOPES } from './domain/oauth-scopes';
export { checkPassword } from './domain/password';
