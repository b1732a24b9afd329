import { Inject, Injectable } from '@nestjs/common';
import type { LookupFunction } from 'node:net';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import {
  assertLiteralAllowed,
  checkOutboundUrl,
  ForbiddenAddressError,
  OutboundPolicy,
  parseOutboundUrl,
  pinnedLookup,
} from '../../../core/net/outbound-address';

/** A receiver address the rules forbid (errors of this class are never retried sooner). */
export class ForbiddenTargetError extends ForbiddenAddressError {
  constructor(host: string) {
    super(host, 'EWEBHOOKFORBIDDEN');
    this.name = 'ForbiddenTargetError';
  }
}

/**
 * Where webhooks may go (issue "URL rules"): the core outbound-address guard
 * (core/net/outbound-address.ts) under WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE_NETWORKS.
 * `lookup` is the resolver undici's sockets use, so the address checked is the address
 * connected to.
 */
@Injectable()
export class WebhookTargets {
  private readonly policy: OutboundPolicy;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.policy = {
      allowHttp: config.webhookAllowHttp,
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    };
    this.lookup = pinnedLookup(this.policy, (host) => new ForbiddenTargetError(host));
  }

  parse(raw: string, field: string): URL {
    return parseOutboundUrl(raw, this.policy, field);
  }

  /** The save-time check: the URL's scheme, and every address its host resolves to. */
  async check(raw: string, field: string): Promise<void> {
    await checkOutboundUrl(raw, field, this.policy);
  }

  /** For an IP-literal host, which the socket connects to without a lookup. */
  assertLiteralAllowed(url: URL): void {
    assertLiteralAllowed(url, this.policy, (host) => new ForbiddenTargetError(host));
  }

  /** net/tls `lookup`: resolves, refuses when any answer is forbidden, hands over only checked addresses. */
  readonly lookup: LookupFunction;
}
