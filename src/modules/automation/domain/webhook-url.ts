import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../../core/http/domain-errors';

export const WEBHOOK_URL_MAX = 2048;

/**
 * The scheme rule (SPEC "Delivery rules": HTTPS; http:// only where WEBHOOK_ALLOW_HTTP,
 * which production refuses). Credentials in the URL are refused: they would be sent to
 * the receiver on every delivery and shown to everyone who can read the rule.
 */
export function parseWebhookUrl(raw: string, options: { allowHttp: boolean }, field: string): URL {
  if (raw.length > WEBHOOK_URL_MAX)
    throw new ValidationError(`${field}: at most ${WEBHOOK_URL_MAX} characters`);
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

/**
 * Whether a receiver at this address is out of bounds: anything but an ordinary public
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
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() !== 'unicast';
}
