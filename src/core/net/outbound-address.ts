import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';
import { ValidationError } from '../http/domain-errors';

/**
 * The outbound-address guard: where the service may send requests a workspace chose the
 * address of (webhooks, external MCP servers). https only unless `allowHttp`, and no
 * destination on a non-public address unless `allowPrivateNetworks` (both come from
 * WEBHOOK_ALLOW_HTTP / WEBHOOK_ALLOW_PRIVATE_NETWORKS, which production refuses/keeps off).
 * The address is checked when the URL is saved and again when each request connects:
 * `pinnedLookup` is the resolver the dispatcher's sockets use, so the address checked is
 * the address connected to (a name re-bound to 127.0.0.1 after the save check is caught).
 */
export interface OutboundPolicy {
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
}

export const OUTBOUND_URL_MAX = 2048;

/** A destination address the rules forbid. */
export class ForbiddenAddressError extends Error {
  constructor(
    host: string,
    readonly code = 'EOUTBOUNDFORBIDDEN',
  ) {
    super(`${host} resolves to a loopback, private, link-local or otherwise non-public address`);
    this.name = 'ForbiddenAddressError';
  }
}

/** Plain http where only https is allowed (a redirect to http://, say). */
export class ForbiddenSchemeError extends ForbiddenAddressError {
  constructor(host: string) {
    super(host);
    this.message = `${host} over plain http, where only https is allowed`;
    this.name = 'ForbiddenSchemeError';
  }
}

/**
 * The scheme rule: https; http:// only where allowed. Credentials in the URL are refused:
 * they would be sent on every request and shown to everyone who can read the resource.
 */
export function parseOutboundUrl(raw: string, options: { allowHttp: boolean }, field: string): URL {
  if (raw.length > OUTBOUND_URL_MAX)
    throw new ValidationError(`${field}: at most ${OUTBOUND_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`${field}: must be an absolute https:// URL`);
  }
  if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:'))
    throw new ValidationError(`${field}: must be an https:// URL`);
  if (url.username || url.password) throw new ValidationError(`${field}: must not carry credentials`);
  if (!url.hostname) throw new ValidationError(`${field}: must name a host`);
  return url;
}

/** The address of a URL host when it is an IP literal (`[::1]` included), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : undefined;
}

/** ::/96, where the deprecated IPv4-compatible addresses (::a.b.c.d) live. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/**
 * Whether a destination at this address is out of bounds: anything but an ordinary public
 * unicast address (loopback, private, link-local, where cloud metadata services live,
 * carrier-grade NAT, unique-local, multicast, reserved, and IPv6 forms embedding IPv4).
 * The ranges are ipaddr.js's, kept by its maintainers rather than written here.
 */
export function isForbiddenAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    // ::a.b.c.d, the deprecated IPv4-compatible form (RFC 4291 2.5.5.1), is no ordinary
    // public address though ipaddr.js calls it unicast (::127.0.0.1, ::169.254.169.254).
    if (v6.match(IPV4_COMPATIBLE)) return true;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  return parsed.range() !== 'unicast';
}

/** The save-time check: the URL's scheme, and every address its host resolves to. Returns the URL. */
export async function checkOutboundUrl(raw: string, field: string, policy: OutboundPolicy): Promise<URL> {
  const url = parseOutboundUrl(raw, policy, field);
  let addresses: string[];
  const literal = literalAddress(url.hostname);
  if (literal) addresses = [literal];
  else {
    try {
      addresses = (await resolveAll(url.hostname)).map((a) => a.address);
    } catch {
      throw new ValidationError(`${field}: the host ${url.hostname} does not resolve`);
    }
  }
  if (!policy.allowPrivateNetworks && addresses.some(isForbiddenAddress))
    throw new ValidationError(
      `${field}: the host resolves to a loopback, private, link-local or metadata address, which the service may not reach`,
    );
  return url;
}

/**
 * For an IP-literal host, which the socket connects to without a lookup: throws the error
 * `forbidden` makes when the address is out of bounds.
 */
export function assertLiteralAllowed(
  url: URL,
  policy: OutboundPolicy,
  forbidden: (host: string) => Error = (h) => new ForbiddenAddressError(h),
): void {
  const literal = literalAddress(url.hostname);
  if (literal && !policy.allowPrivateNetworks && isForbiddenAddress(literal)) throw forbidden(url.hostname);
}

/** net/tls `lookup`: resolves, refuses when any answer is forbidden, hands over only checked addresses. */
export function pinnedLookup(
  policy: OutboundPolicy,
  forbidden: (host: string) => Error = (h) => new ForbiddenAddressError(h),
): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, options.family).then(
      (addresses) => {
        if (!policy.allowPrivateNetworks && addresses.some((a) => isForbiddenAddress(a.address))) {
          callback(forbidden(hostname) as NodeJS.ErrnoException, '', 4);
          return;
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
}

/**
 * An undici dispatcher whose sockets connect only to checked addresses: names through
 * pinnedLookup, and IP-literal hosts (which skip the lookup) checked at connect time too;
 * plain http only where the policy allows it.
 * Callers still check a literal first (assertLiteralAllowed) to fail before any work; the
 * connect-time check is what covers the hosts a caller never saw, such as the target of a
 * redirect, which fetch follows through this same dispatcher (`Location:
 * http://169.254.169.254/` from a public server).
 */
export function pinnedAgent(
  policy: OutboundPolicy,
  options: { connectTimeoutMs: number; forbidden?: (host: string) => Error; connections?: number },
): Agent {
  const forbidden = options.forbidden ?? ((h: string) => new ForbiddenAddressError(h));
  const connector = buildConnector({
    lookup: pinnedLookup(policy, forbidden),
    timeout: options.connectTimeoutMs,
  });
  return new Agent({
    connect: (opts, callback) => {
      if (opts.protocol === 'http:' && !policy.allowHttp) {
        callback(new ForbiddenSchemeError(opts.hostname), null);
        return;
      }
      const literal = literalAddress(opts.hostname);
      if (literal && !policy.allowPrivateNetworks && isForbiddenAddress(literal)) {
        callback(forbidden(opts.hostname), null);
        return;
      }
      connector(opts, callback);
    },
    keepAliveTimeout: 10_000,
    connections: options.connections ?? 64,
  });
}

function resolveAll(hostname: string, family?: number | string): Promise<LookupAddress[]> {
  const fam = family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : typeof family === 'number' ? family : 0;
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, family: fam }, (err, addresses) => {
      if (err) reject(err);
      else if (!addresses.length)
        reject(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
      else resolve(addresses);
    }),
  );
}
