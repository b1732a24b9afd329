import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { setMaxListeners } from 'node:events';
import { Agent, Dispatcher } from 'undici';
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

/** What a POST needs of its URL, parsed and checked once per URL (the policy is fixed per process). */
interface Target {
  origin: string;
  path: string;
}

const MAX_CACHED_TARGETS = 1000;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

/**
 * One POST through undici's dispatcher API: the response's status and headers, and at most
 * RESPONSE_READ_MAX of its body, of which the first RESPONSE_EXCERPT_MAX bytes are kept,
 * without the stream and async iterator a `request()` body costs per POST. Aborted by the
 * deadline signal (a total bound on connect, headers and body) or past RESPONSE_READ_MAX.
 */
class PostHandler implements Dispatcher.DispatchHandler {
  private abortRequest: ((reason: Error) => void) | null = null;
  private status: number | null = null;
  private retryAfter: string | null = null;
  private readonly chunks: Buffer[] = [];
  private read = 0;
  private done = false;

  constructor(
    /** The POSTs in flight under the same deadline signal, aborted together when it fires. */
    private readonly inFlight: Set<PostHandler>,
    private readonly resolve: (r: Answer) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    inFlight.add(this);
  }

  /** The deadline passed: the request is aborted (its onError settles it), or settled now if not yet connected. */
  abort(reason: unknown): void {
    if (this.abortRequest) this.abortRequest(reason as Error);
    else this.finish(null, reason);
  }

  private finish(answer: Answer | null, error?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.inFlight.delete(this);
    if (answer) this.resolve(answer);
    else this.reject(error);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.done) abort(new Error('settled'));
    else this.abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.status = statusCode;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after')
        this.retryAfter = rawHeaders[i + 1].toString('latin1');
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.read < RESPONSE_EXCERPT_MAX) this.chunks.push(chunk);
    this.read += chunk.length;
    // Enough of it: the rest is dropped with the connection.
    if (this.read > RESPONSE_READ_MAX) {
      this.complete();
      this.abortRequest?.(new Error('response body read far enough'));
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.complete();
  }

  onError(error: Error): void {
    this.finish(null, error);
  }

  private complete(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.finish({ status: this.status ?? 0, retryAfter: this.retryAfter, body: body.toString('utf8') });
  }
}

/**
 * One POST to a receiver through undici: one Agent for the process, so connections are
 * kept alive and reused per receiver; its sockets resolve names through
 * the core outbound guard's pinned lookup (core/net/outbound-address.ts). Redirects are not
 * followed (the dispatcher follows none); a 3xx is a failure like any non-2xx.
 */
@Injectable()
export class WebhookSender implements OnModuleDestroy {
  private readonly agent: Agent;
  private readonly deadlines: DeadlineSignals;
  /** Per deadline signal, its POSTs in flight: one listener per signal, not one per POST. */
  private readonly inFlight = new WeakMap<AbortSignal, Set<PostHandler>>();
  /** URLs parsed and past the literal-address check (names are checked again at each connect). */
  private readonly targetsByUrl = new Map<string, Target>();

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

  private targetOf(url: string): Target {
    let target = this.targetsByUrl.get(url);
    if (!target) {
      const parsed = new URL(url);
      this.targets.assertLiteralAllowed(parsed);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.targetsByUrl.size >= MAX_CACHED_TARGETS) this.targetsByUrl.clear();
      this.targetsByUrl.set(url, target);
    }
    return target;
  }

  private inFlightUnder(signal: AbortSignal): Set<PostHandler> {
    let handlers = this.inFlight.get(signal);
    if (!handlers) {
      const set = (handlers = new Set<PostHandler>());
      this.inFlight.set(signal, set);
      signal.addEventListener('abort', () => set.forEach((h) => h.abort(signal.reason)), { once: true });
    }
    return handlers;
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const duration = () => Math.round(performance.now() - started);
    try {
      const target = this.targetOf(url);
      const signal = this.deadlines.next();
      if (signal.aborted) throw signal.reason;
      const res = await new Promise<Answer>((resolve, reject) =>
        this.agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers, body },
          new PostHandler(this.inFlightUnder(signal), resolve, reject),
        ),
      );
      return {
        status: res.status,
        bodyExcerpt: excerpt(res.body, RESPONSE_EXCERPT_MAX),
        retryAfter: res.retryAfter,
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
