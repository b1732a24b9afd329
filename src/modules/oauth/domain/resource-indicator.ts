/**
 * Resource indicators (RFC 8707), as MCP clients send them at authorization and at the
 * token endpoint (the MCP authorization specification makes `resource` mandatory for
 * them). Every token this server issues is good for the whole service (the REST API and
 * /mcp alike), so the resources it can issue for are the issuer's own URL and the URLs
 * under it; a token asked for any other resource (another MCP server, say) is refused with
 * `invalid_target` instead of being issued for the service, where the other resource's
 * operator could replay it (the confused deputy RFC 8707 and RFC 9700 §2.3 guard against).
 * Returns why `resource` cannot be served, or undefined when it can.
 */
export function resourceProblem(resource: string, issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return 'resource: must be an absolute URI';
  }
  if (url.hash || resource.includes('#')) return 'resource: must not contain a fragment';
  const base = new URL(issuer).href.replace(/\/$/, '');
  const href = url.href;
  if (href === base || href.startsWith(`${base}/`) || href.startsWith(`${base}?`)) return undefined;
  return `resource: this authorization server issues tokens only for ${base} and the resources under it`;
}
