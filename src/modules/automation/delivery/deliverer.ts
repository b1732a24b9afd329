import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { SecretBox } from '../../../core/crypto/secret-box';
import { ruleSecretContext, signatureHeaders } from '../domain/signature';
import { DeliveryToSend, RuleToSend } from './delivery-log';
import type { DeliveryAttempt } from './webhook-delivery.entity';
import { SendResult, USER_AGENT, WebhookSender } from './webhook-sender';

export const SECRET_BOX = Symbol('SECRET_BOX');

/** One attempt of a delivery: its headers (signed with every live secret) and the receiver's answer. */
@Injectable()
export class Deliverer {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    private readonly sender: WebhookSender,
  ) {}

  /** Opened secrets by sealed value (opening is a decipher per delivery otherwise). */
  private readonly opened = new Map<string, string>();

  private open(sealed: string, ruleId: number): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.box.open(sealed, ruleSecretContext(ruleId));
      if (this.opened.size >= 1000) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  /**
   * The rule is passed as the caller read it (never `delivery.rule!`): a rule deleted or
   * changed since is the caller's to handle (not sent, 404), not a TypeError here.
   */
  headersFor(delivery: DeliveryToSend, rule: RuleToSend, now: Date): Record<string, string> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets: string[] = [];
    if (rule.secret) secrets.push(this.open(rule.secret, delivery.ruleId));
    // Rotation overlap: the old secret signs too, so receivers switch without a gap.
    if (rule.previousSecret && rule.previousSecretUntil && rule.previousSecretUntil > now)
      secrets.push(this.open(rule.previousSecret, delivery.ruleId));
    // And those rotated out before it, each until its own overlap ends.
    for (const earlier of rule.earlierSecrets)
      if (Date.parse(earlier.validUntil) > now.getTime())
        secrets.push(this.open(earlier.secret, delivery.ruleId));
    return {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-event': delivery.eventType,
      'x-webhook-id': delivery.id,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      ...signatureHeaders(secrets, delivery.id, timestamp, delivery.body),
    };
  }

  async attempt(
    delivery: DeliveryToSend,
    rule: RuleToSend,
  ): Promise<{ result: SendResult; attempt: DeliveryAttempt }> {
    const now = new Date();
    const headers = this.headersFor(delivery, rule, now);
    const result = await this.sender.send(rule.webhookUrl, headers, delivery.body);
    return {
      result,
      attempt: {
        attempt: attemptNumberOf(delivery),
        at: now.toISOString(),
        requestHeaders: headers,
        responseStatus: result.status,
        responseBodyExcerpt: result.bodyExcerpt,
        error: result.error,
        durationMs: result.durationMs,
        nextRetryAt: null,
      },
    };
  }

  get timeoutMs(): number {
    return this.config.webhookTimeoutMs;
  }
}

/**
 * The number the next attempt of a delivery carries in its log: one more than the attempts
 * logged, over every round (a redelivery or recovery goes on counting where the failed
 * round stopped, so each number appears once per webhook-id).
 */
export const attemptNumberOf = (delivery: Pick<DeliveryToSend, 'attemptsLogged'>): number =>
  delivery.attemptsLogged + 1;

/** An attempt recorded without a POST: why the delivery was not sent. */
export function notSentAttempt(
  delivery: Pick<DeliveryToSend, 'attemptsLogged'>,
  reason: string,
): DeliveryAttempt {
  return {
    attempt: attemptNumberOf(delivery),
    at: new Date().toISOString(),
    requestHeaders: {},
    responseStatus: null,
    responseBodyExcerpt: null,
    error: `not sent: ${reason}`,
    durationMs: 0,
    nextRetryAt: null,
  };
}

export const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** RFC 9110's HTTP-date: IMF-fixdate, or the obsolete RFC 850 form, both in GMT. */
const HTTP_DATE = new RegExp(
  `^(?:${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT)$`,
);
/** ... or asctime's, which names no zone and means GMT. */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * Retry-After (delay-seconds or an HTTP-date, RFC 9110 10.2.3) as milliseconds from now;
 * null when absent or anything else (JavaScript's lenient date parsing would read a year
 * into garbage such as "soon 2030"). Capped at a day: a receiver cannot park a delivery forever.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else if (HTTP_DATE.test(v) || ASCTIME.test(v)) {
    const at = Date.parse(ASCTIME.test(v) ? `${v} GMT` : v);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  } else return null;
  return Math.min(Math.max(ms, 0), 24 * 3600 * 1000);
}

/** The wait before retry `n` (1-based) with ±20% jitter, so retries of many deliveries spread out. */
export function retryDelayMs(delays: readonly number[], n: number, random = Math.random()): number | null {
  if (n > delays.length) return null;
  const base = delays[n - 1];
  return Math.round(base * (0.8 + 0.4 * random));
}
