import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job, WorkerOptions } from 'bullmq';
// Not re-exported by the package index; core's queues module reads it the same way.
import { WORKER_METADATA } from '@nestjs/bullmq/dist/bull.constants';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { JsonLogger } from '../../../core/logging/json-logger';
import { AuthorReach } from '../delivery/author-reach';
import { DeliveryLog, DeliveryToSend, PendingDelivery } from '../delivery/delivery-log';
import { Deliverer, isSuccess, notSentAttempt, retryAfterMs, retryDelayMs } from '../delivery/deliverer';
import { RulePacer } from '../delivery/pacer';
import { eventRuleDecider } from '../domain/event-rule';
import { DisableReason, eventRuleStream } from '../domain/event-rule.events';

export const WEBHOOK_QUEUE = 'webhook-deliveries';

export interface WebhookJob {
  deliveryId: string;
  /** The delivery as the reactor matched it, logged (once) by the job's first run. */
  pending?: PendingDelivery;
  /** The pacing slot this job already holds (set when it was put back to wait for it). */
  slotAt?: number;
}

interface RuleSlots {
  jobs: number;
  posting: number;
  waiting: (() => void)[];
}

/** The shortest failing streak's gap that counts, as a share of the configured period. */
const MIN_GAP_SHARE = 0.1;
const TWELVE_HOURS = 12 * 3600 * 1000;
/** A first attempt running longer than this has its delivery listed (pending) in the log meanwhile. */
export const LIST_PENDING_AFTER_MS = 1000;
/**
 * A delivery that waited this long for a POST slot reads its rule again before sending: a
 * rule changed meanwhile (URL, secret, disabled, deleted) is obeyed, not the rule as loaded.
 */
export const REREAD_RULE_AFTER_MS = 100;

/**
 * Delivers one webhook per job and records every attempt in the delivery log. A non-2xx
 * answer (or none within WEBHOOK_TIMEOUT_MS) puts the job back in the queue until its
 * next retry (WEBHOOK_RETRY_DELAYS_MS, jittered; later if Retry-After says so), so a
 * waiting retry holds no worker; after the last one the delivery is failed. 410 Gone
 * fails it at once and disables the rule. A worker that dies mid-attempt loses its job
 * lock and the job runs again elsewhere (queue stalled-job recovery): the receiver may
 * see it twice, always with the same webhook-id.
 */
@Processor(WEBHOOK_QUEUE)
export class WebhookDeliveryProcessor extends WorkerHost {
  /** Per rule in this process: jobs in progress, POSTs in flight (WEBHOOK_RULE_CONCURRENCY), jobs waiting for one. */
  private readonly ruleSlots = new Map<number, RuleSlots>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: DeliveryLog,
    private readonly deliverer: Deliverer,
    private readonly pacer: RulePacer,
    private readonly repo: EventSourcedRepository,
    private readonly logger: JsonLogger,
    private readonly reach: AuthorReach,
  ) {
    super();
    // The concurrency is configuration, but @nestjs/bullmq takes worker options only from
    // the class's @Processor metadata, read after this instance exists: the queues module
    // instantiates a per-application subclass (new.target), so setting it there is local.
    const options = (Reflect.getMetadata(WORKER_METADATA, new.target) ?? {}) as WorkerOptions;
    Reflect.defineMetadata(
      WORKER_METADATA,
      { ...options, concurrency: config.webhookConcurrency },
      new.target,
    );
  }

  async process(job: Job<WebhookJob>, token?: string): Promise<string> {
    // A first run's delivery is logged with its first attempt (the job carries its row).
    const delivery = await this.log.load(job.data.deliveryId, job.data.pending);
    if (!delivery) throw new Error(`delivery ${job.data.deliveryId} is not logged`);
    if (delivery.status !== 'pending') return 'done already';
    if (!delivery.rule || !delivery.rule.enabled) {
      await this.log.recordAttempt(
        delivery,
        notSentAttempt(delivery, delivery.rule ? 'the rule is disabled' : 'the rule was deleted'),
        {
          status: 'failed',
          nextAttemptAt: null,
        },
      );
      return 'rule off';
    }
    // Never send what the rule's author can no longer read (rule-access.policy.ts).
    const refusal = delivery.isTest ? null : await this.reach.refusal(delivery);
    if (refusal) {
      await this.log.recordAttempt(delivery, notSentAttempt(delivery, refusal), {
        status: 'failed',
        nextAttemptAt: null,
      });
      return 'not allowed';
    }
    // Pacing: wait for this rule's next slot outside the worker.
    const rate = delivery.rule.maxPerSecond;
    if (rate && !(job.data.slotAt && Date.now() >= job.data.slotAt - 5)) {
      const slot = await this.pacer.reserve(delivery.ruleId, rate);
      if (slot > Date.now() + 5) {
        await this.logWhileWaiting(delivery);
        return this.putBack(job, token, slot, { ...job.data, slotAt: slot });
      }
    }
    // One rule's share of this worker: at most twice its POST slots in progress (the
    // others wait on their log writes or for a slot), the rest go back to the queue.
    const slots = this.slotsOf(delivery.ruleId);
    if (slots.jobs >= 2 * this.config.webhookRuleConcurrency) {
      await this.logWhileWaiting(delivery);
      return this.putBack(job, token, Date.now() + 50 + Math.floor(Math.random() * 100), job.data);
    }
    slots.jobs++;
    try {
      return await this.deliver(job, token, delivery, slots);
    } finally {
      if (--slots.jobs === 0) this.ruleSlots.delete(delivery.ruleId);
    }
  }

  /** A delivery that goes back to the queue before its first attempt is listed (pending) meanwhile. */
  private async logWhileWaiting(delivery: DeliveryToSend): Promise<void> {
    if (delivery.unlogged) await this.log.insertPending([delivery.unlogged]);
  }

  private slotsOf(ruleId: number): RuleSlots {
    let slots = this.ruleSlots.get(ruleId);
    if (!slots) this.ruleSlots.set(ruleId, (slots = { jobs: 0, posting: 0, waiting: [] }));
    return slots;
  }

  /**
   * One attempt holding one of its rule's WEBHOOK_RULE_CONCURRENCY POST slots (waiting in
   * turn); why it is not sent instead when, while it waited, its rule was disabled or
   * deleted or its author lost the reach the delivery needs.
   */
  private async attempt(delivery: DeliveryToSend, slots: RuleSlots) {
    const since = Date.now();
    if (slots.posting >= this.config.webhookRuleConcurrency)
      await new Promise<void>((resolve) => slots.waiting.push(resolve));
    else slots.posting++;
    try {
      if (Date.now() - since >= REREAD_RULE_AFTER_MS) {
        const fresh = await this.log.load(delivery.id, delivery.unlogged);
        if (fresh) delivery.rule = fresh.rule;
        const refusal =
          delivery.rule?.enabled && !delivery.isTest ? await this.reach.refusal(delivery) : null;
        if (refusal) return refusal;
      }
      if (!delivery.rule?.enabled) return delivery.rule ? 'the rule is disabled' : 'the rule was deleted';
      return await this.deliverer.attempt(delivery, delivery.rule);
    } finally {
      // The slot passes straight to the next in line, or is freed.
      const next = slots.waiting.shift();
      if (next) next();
      else slots.posting--;
    }
  }

  private async deliver(
    job: Job<WebhookJob>,
    token: string | undefined,
    delivery: DeliveryToSend,
    slots: RuleSlots,
  ): Promise<string> {
    // A first attempt still running after LIST_PENDING_AFTER_MS (a slow receiver, or a
    // wait for a POST slot) is listed pending meanwhile; its record appends to that row.
    const listing = delivery.unlogged
      ? setTimeout(() => void this.logWhileWaiting(delivery).catch(() => undefined), LIST_PENDING_AFTER_MS)
      : undefined;
    let outcome: Awaited<ReturnType<WebhookDeliveryProcessor['attempt']>>;
    try {
      outcome = await this.attempt(delivery, slots);
    } finally {
      clearTimeout(listing);
    }
    if (typeof outcome === 'string') {
      await this.log.recordAttempt(delivery, notSentAttempt(delivery, outcome), {
        status: 'failed',
        nextAttemptAt: null,
      });
      return 'not sent';
    }
    const { result, attempt } = outcome;
    if (isSuccess(result.status)) {
      await this.log.recordAttempt(delivery, attempt, { status: 'succeeded', nextAttemptAt: null });
      return 'succeeded';
    }
    if (result.status === 410) {
      await this.log.recordAttempt(delivery, attempt, { status: 'failed', nextAttemptAt: null });
      await this.disable(
        delivery,
        'receiver_gone',
        `the receiver answered 410 Gone to delivery ${delivery.id}`,
        attempt.at,
      );
      return 'gone';
    }
    // The schedule counts this round's attempts (a redelivery starts a new round); the log's
    // numbers go on counting across rounds.
    const wait = retryDelayMs(this.config.webhookRetryDelaysMs, delivery.attemptCount + 1);
    if (wait === null) {
      await this.log.recordAttempt(delivery, attempt, { status: 'failed', nextAttemptAt: null });
      await this.disableIfFailingTooLong(delivery, attempt.at);
      return 'failed';
    }
    const after = retryAfterMs(result.retryAfter);
    const next = new Date(Date.now() + Math.max(wait, after ?? 0));
    attempt.nextRetryAt = next.toISOString();
    await this.log.recordAttempt(delivery, attempt, { status: 'pending', nextAttemptAt: next });
    return this.putBack(job, token, next.getTime(), { deliveryId: delivery.id });
  }

  /** Back to the delayed set until `at`; BullMQ's DelayedError tells the worker the job is not finished. */
  private async putBack(
    job: Job<WebhookJob>,
    token: string | undefined,
    at: number,
    data: WebhookJob,
  ): Promise<never> {
    if (data !== job.data) await job.updateData(data);
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }

  /**
   * Sustained failure (issue: every delivery failed for WEBHOOK_DISABLE_AFTER_DAYS, with
   * at least two failures 12 hours apart, or a tenth of the period when that is shorter):
   * the rule is disabled with its logs kept; PUT enabled:true resumes it.
   */
  private async disableIfFailingTooLong(delivery: DeliveryToSend, asOf: string): Promise<void> {
    if (delivery.isTest || !delivery.rule) return;
    const period = this.config.webhookDisableAfterDays * 24 * 3600 * 1000;
    const streak = await this.log.failingStreak(delivery.ruleId, delivery.rule.enabledSince);
    if (!streak) return;
    const gap = Math.min(TWELVE_HOURS, period * MIN_GAP_SHARE);
    const failingFor = Date.now() - streak.first.getTime();
    if (failingFor >= period && streak.last.getTime() - streak.first.getTime() >= gap)
      await this.disable(
        delivery,
        'sustained_failure',
        `every delivery failed since ${streak.first.toISOString()}`,
        asOf,
      );
  }

  /** `asOf`: when the attempt behind the verdict was made; a rule moved or re-enabled since keeps going. */
  private async disable(
    delivery: DeliveryToSend,
    reason: DisableReason,
    detail: string,
    asOf: string,
  ): Promise<void> {
    const ctx = { requestId: `webhook-${delivery.id}`, actor: SYSTEM_ACTOR, appended: [] };
    const { events } = await requestContext.run(ctx, () =>
      this.repo.handle({
        streamName: eventRuleStream(delivery.ruleId),
        workspaceId: delivery.workspaceId,
        decider: eventRuleDecider,
        command: {
          type: 'DisableEventRule',
          ruleId: delivery.ruleId,
          reason,
          detail,
          asOf,
          now: new Date().toISOString(),
        },
      }),
    );
    // Logged only when it was: already off, moved or re-enabled since, it stays as it is.
    if (events.length)
      this.logger.event('warn', { msg: 'event rule disabled', ruleId: delivery.ruleId, reason });
  }
}
