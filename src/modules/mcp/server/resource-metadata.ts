import { OAUTH_SCOPES } from '../../oauth';

/** The MCP endpoint as a protected resource: `<PUBLIC_BASE_URL>/mcp`. */
export function mcpResource(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/mcp`;
}

/**
 * RFC 9728 §3.1: the well-known segment goes between the host and the resource's path,
 * so `https://host/api/v2/mcp` has its metadata at
 * `https://host/.well-known/oauth-protected-resource/api/v2/mcp`.
 */
export function resourceMetadataPath(publicBaseUrl: string): string {
  return `/.well-known/oauth-protected-resource${new URL(mcpResource(publicBaseUrl)).pathname}`;
}

export function resourceMetadataUrl(publicBaseUrl: string): string {
  return new URL(resourceMetadataPath(publicBaseUrl), publicBaseUrl).toString();
}

/** RFC 9728 §2: the resource, the authorization server that issues its tokens (the issuer), the scopes. */
export function protectedResourceMetadata(publicBaseUrl: string): Record<string, unknown> {
  return {
    resource: mcpResource(publicBaseUrl),
    authorization_servers: [publicBaseUrl.replace(/\/$/, '')],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Workspace service MCP endpoint',
  };
}
