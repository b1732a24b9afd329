import { ALL_SCOPES } from '../../../core/auth/scopes';
import { OAUTH_SCOPES } from '../domain/oauth-scopes';

/** RFC 8414 §2 metadata of the issuer (PUBLIC_BASE_URL, the /api/v2 address). */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  const base = issuer.replace(/\/$/, '');
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    revocation_endpoint: `${base}/oauth/revoke`,
    introspection_endpoint: `${base}/oauth/introspect`,
    registration_endpoint: `${base}/oauth/register`,
    scopes_supported: [...new Set([...OAUTH_SCOPES, ...ALL_SCOPES])],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path. */
export function metadataPath(issuer: string): string {
  const path = new URL(issuer).pathname.replace(/\/$/, '');
  return `/.well-known/oauth-authorization-server${path}`;
}
