import { Inject, Injectable } from '@nestjs/common';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { ValidationError } from '../../../core/http/domain-errors';
import { isForbiddenAddress, literalAddress, parseWebhookUrl } from '../domain/webhook-url';

/** A receiver address the rules forbid (errors of this class are never retried sooner). */
export class ForbiddenTargetError extends Error {
  readonly code = 'EWEBHOOKFORBIDDEN';
  constructor(host: string) {
    super(`${host} resolves to a loopback, private, link-local or otherwise non-public address`);
    this.name = 'ForbiddenTargetError';
  }
}

/**
 * Where webhooks may go (issue "URL rules"): https only unless WEBHOOK_ALLOW_HTTP, and no
 * receiver on a non-public address unless WEBHOOK_ALLOW_PRIVATE_NETWORKS. The address is
 * checked when a rule is saved and again when each delivery connects: `lookup` is the
 * resolver undici's sockets use, so the address checked is the address connected to (a
 * name re-bound to 127.0.0.1 after the save check is caught there).
 */
@Injectable()
export class WebhookTargets {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  parse(raw: string, field: string): URL {
    return parseWebhookUrl(raw, { allowHttp: this.config.webhookAllowHttp }, field);
  }

  /** The save-time check: the URL's scheme, and every address its host resolves to. */
  async check(raw: string, field: string): Promise<void> {
    const url = this.parse(raw, field);
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
    if (!this.config.webhookAllowPrivateNetworks && addresses.some(isForbiddenAddress))
      throw new ValidationError(
        `${field}: the host resolves to a loopback, private, link-local or metadata address, which webhooks may not reach`,
      );
  }

  /** For an IP-literal host, which the socket connects to without a lookup. */
  assertLiteralAllowed(url: URL): void {
    const literal = literalAddress(url.hostname);
    if (literal && !this.config.webhookAllowPrivateNetworks && isForbiddenAddress(literal))
      throw new ForbiddenTargetError(url.hostname);
  }

  /** net/tls `lookup`: resolves, refuses when any answer is forbidden, hands over only checked addresses. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    resolveAll(hostname, options.family).then(
      (addresses) => {
        if (
          !this.config.webhookAllowPrivateNetworks &&
          addresses.some((a) => isForbiddenAddress(a.address))
        ) {
          callback(new ForbiddenTargetError(hostname), '', 4);
          return;
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
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
