import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import { pinnedAgent } from '../../../core/net/outbound-address';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { storableText } from '../../../core/text/storable-text';
import { ForbiddenTargetError, WebhookTargets } from './webhook-targets';

export const RESPONSE_EXCERPT_MAX = 1024;
/** Read at most this much of a response (the rest is dropped with the connection). */
const RESPONSE_READ_MAX = 64 * 1024;
export const USER_AGENT = 'workspace-service-webhooks/1';
/** Requests started within this many ms share one timeout signal (see DeadlineSignals). */
export const TIMEOUT_GRANULARITY_MS = 100;

/**
 * One abort signal per slice of TIMEOUT_GRANULARITY_MS, aborted `timeoutMs` after the
 * slice ends: every request started in the slice is aborted between timeoutMs and
 * timeoutMs + the slice after it started, unless it is done by then. A total bound on
 * connect, headers and body alike, like AbortSignal.timeout per request, without its
 * signal and timer per request (a tenth of the POST's cost, measured in isolation).
 */
export class DeadlineSignals {
  private current: AbortSignal | null = null;
  private until = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly timeoutMs: number,
    private readonly sliceMs = TIMEOUT_GRANULARITY_MS,
  ) {}

  /** The signal for a request starting now. */
  next(now = Date.now()): AbortSignal {
    if (this.current && now < this.until) return this.current;
    const controller = new AbortController();
    // One listener per request in flight: many by design.
    setMaxListeners(0, controller.signal);
    this.current = controller.signal;
    this.until = now + this.sliceMs;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      controller.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    }, this.timeoutMs + this.sliceMs);
    timer.unref();
    this.timers.add(timer);
    return controller.signal;
  }

  close(): void {
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
    this.current = null;
  }
}

export interface SendResult {
  status: number | null;
  bodyExcerpt: string | null;
  retryAfter: string | null;
  error: string | null;
  durationMs: number;
}

/**
 * The first `max` UTF-16 units of a text, never ending on half a character, NUL and lone
 * surrogates as U+FFFD (core's storableText): the attempt is logged as JSON, and PostgreSQL
 * refuses either there (the whole batch of attempt records with it, so every delivery of the
 * batch would be retried and sent again).
 */
export function excerpt(text: string, max: number): string {
  return storableText(text, { max });
}

/**
 * One POST to a receiver through undici: one Agent for the process, so connections are
 * kept alive and reused per receiver; its sockets resolve names through
 * the core outbound guard's pinned lookup (core/net/outbound-address.ts). Redirects are not followed (undici's request
 * follows none without the redirect interceptor); a 3xx is a failure like any non-2xx.
 */
@Injectable()
export class WebhookSender implements OnModuleDestroy {
  private readonly agent: Agent;
  private readonly deadlines: DeadlineSignals;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly targets: WebhookTargets,
  ) {
    this.agent = pinnedAgent(
      { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.webhookAllowPrivateNetworks },
      { connectTimeoutMs: config.webhookTimeoutMs, forbidden: (host) => new ForbiddenTargetError(host) },
    );
    this.deadlines = new DeadlineSignals(config.webhookTimeoutMs);
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const duration = () => Math.round(performance.now() - started);
    try {
      const target = new URL(url);
      this.targets.assertLiteralAllowed(target);
      const res = await request(target, {
        dispatcher: this.agent,
        method: 'POST',
        headers,
        body,
        signal: this.deadlines.next(),
      });
      let read = 0;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (read < RESPONSE_EXCERPT_MAX) chunks.push(chunk);
        read += chunk.length;
        if (read > RESPONSE_READ_MAX) {
          res.body.destroy();
          break;
        }
      }
      const retryAfter = res.headers['retry-after'];
      return {
        status: res.statusCode,
        bodyExcerpt: excerpt(Buffer.concat(chunks).toString('utf8'), RESPONSE_EXCERPT_MAX),
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        error: null,
        durationMs: duration(),
      };
    } catch (error) {
      const e = error as Error & { code?: string; cause?: { code?: string; message?: string } };
      const reason =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `no answer within ${this.config.webhookTimeoutMs} ms`
          : `${e.code ?? e.cause?.code ?? e.name}: ${e.cause?.message ?? e.message}`;
      return {
        status: null,
        bodyExcerpt: null,
        retryAfter: null,
        error: excerpt(reason, 500),
        durationMs: duration(),
      };
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.deadlines.close();
    await this.agent.close().catch(() => undefined);
  }
}
