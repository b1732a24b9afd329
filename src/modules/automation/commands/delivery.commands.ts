import { InjectQueue } from '@nestjs/bullmq';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { DeliveryLog } from '../delivery/delivery-log';
import { Deliverer, isSuccess, notSentAttempt } from '../delivery/deliverer';
import type { DeliveryAttempt } from '../delivery/webhook-delivery.entity';
import { buildPayload } from '../domain/payload';
import { EventRuleEntity } from '../projections/event-rule.entity';
import { WEBHOOK_QUEUE, WebhookJob } from '../workers/webhook-delivery.processor';

export class RedeliverCommand {
  constructor(
    readonly workspaceId: string,
    readonly deliveryId: string,
  ) {}
}

export class RecoverDeliveriesCommand {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
    readonly since: string,
  ) {}
}

export class TestEventRuleCommand {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
  ) {}
}

export interface TestOutcome {
  deliveryId: string;
  succeeded: boolean;
  attempt: DeliveryAttempt;
}

/**
 * Queues deliveries again with their own ids (so the same webhook-id); a fresh job id per
 * round. Answers those queued: a delivery pending already (another request reopened it) is not.
 */
async function requeue(
  log: DeliveryLog,
  queue: Queue<WebhookJob>,
  ids: readonly string[],
): Promise<string[]> {
  const reopened = await log.reopen(ids);
  const round = Date.now().toString(36);
  try {
    await queue.addBulk(
      reopened.map(({ id }) => ({
        name: 'deliver',
        data: { deliveryId: id },
        opts: { jobId: `redeliver-${id}-${round}` },
      })),
    );
  } catch (error) {
    // Not queued: as they were, so a later redeliver or recover reaches them again.
    await log.putBack(reopened);
    throw error;
  }
  return reopened.map((r) => r.id);
}

/** A disabled rule's deliveries are not queued: each would fail at once without a POST. */
const ruleDisabled = (rule: string, then: string) =>
  new ConflictError(`${rule} is disabled; enable it (PUT enabled: true), then ${then}`);

@CommandHandler(RedeliverCommand)
export class RedeliverHandler implements ICommandHandler<RedeliverCommand, void> {
  constructor(
    private readonly db: DataSource,
    private readonly log: DeliveryLog,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookJob>,
  ) {}

  async execute(cmd: RedeliverCommand): Promise<void> {
    const rows = (await this.db.query(
      `SELECT d.status, d.is_test, d.rule_id, r.enabled
         FROM webhook_deliveries d LEFT JOIN event_rules r ON r.id = d.rule_id AND r.workspace_id = d.workspace_id
        WHERE d.id = $1 AND d.workspace_id = $2`,
      [cmd.deliveryId, cmd.workspaceId],
    )) as { status: string; is_test: boolean; rule_id: number; enabled: boolean | null }[];
    if (!rows.length || rows[0].is_test) throw new NotFoundError('Delivery not found');
    const pending = () =>
      new ConflictError(
        'The delivery is still being attempted; redeliver it once it has succeeded or failed',
      );
    if (rows[0].status === 'pending') throw pending();
    // Queued for a rule that cannot send, it would only fail again at once, with no POST.
    if (rows[0].enabled === null)
      throw new ConflictError(
        `Event rule ${rows[0].rule_id} of this delivery was deleted; nothing can send it`,
      );
    if (!rows[0].enabled) throw ruleDisabled(`Event rule ${rows[0].rule_id} of this delivery`, 'redeliver');
    if (!(await requeue(this.log, this.queue, [cmd.deliveryId])).length) throw pending();
  }
}

/** Every delivery of the rule that ended failed since `since`, queued again (issue: recovery). */
@CommandHandler(RecoverDeliveriesCommand)
export class RecoverDeliveriesHandler implements ICommandHandler<RecoverDeliveriesCommand, string[]> {
  constructor(
    private readonly db: DataSource,
    private readonly log: DeliveryLog,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookJob>,
  ) {}

  async execute(cmd: RecoverDeliveriesCommand): Promise<string[]> {
    const rule = await this.db
      .getRepository(EventRuleEntity)
      .findOneBy({ id: cmd.ruleId, workspaceId: cmd.workspaceId });
    if (!rule) throw new NotFoundError('ruleId: no such event rule in this workspace');
    if (!rule.enabled) throw ruleDisabled(`ruleId: event rule ${rule.id}`, 'recover');
    const ids = await this.log.failedSince(cmd.workspaceId, cmd.ruleId, cmd.since);
    const queued: string[] = [];
    for (let i = 0; i < ids.length; i += 1000)
      queued.push(...(await requeue(this.log, this.queue, ids.slice(i, i + 1000))));
    return queued;
  }
}

/**
 * Sends a sample event of the rule's type now, from this process, and answers with the
 * attempt (one attempt, no retries). It is logged like any delivery, marked as a test.
 */
@CommandHandler(TestEventRuleCommand)
export class TestEventRuleHandler implements ICommandHandler<TestEventRuleCommand, TestOutcome> {
  constructor(
    private readonly db: DataSource,
    private readonly log: DeliveryLog,
    private readonly deliverer: Deliverer,
  ) {}

  async execute(cmd: TestEventRuleCommand): Promise<TestOutcome> {
    const rule = await this.db
      .getRepository(EventRuleEntity)
      .findOneBy({ id: cmd.ruleId, workspaceId: cmd.workspaceId });
    if (!rule) throw new NotFoundError('Event rule not found');
    const now = new Date().toISOString();
    const id = randomUUID();
    const body = buildPayload(
      rule.payloadFormat,
      {
        eventId: randomUUID(),
        event: rule.eventType,
        timestamp: now,
        workspace: { uuid: cmd.workspaceId, name: null },
        eventRule: { id: rule.id, uuid: rule.uuid, name: rule.name },
      },
      { test: true },
    );
    await this.log.insertPending([
      {
        id,
        workspaceId: cmd.workspaceId,
        ruleId: rule.id,
        eventId: null,
        eventType: rule.eventType,
        body: JSON.stringify(body),
        isTest: true,
        createdAt: now,
      },
    ]);
    // The rule as the log reads it now: deleted since the lookup above (a racing DELETE),
    // the test is recorded as not sent and the answer is the 404 of a missing rule.
    const delivery = await this.log.load(id);
    if (!delivery?.rule) {
      if (delivery)
        await this.log.recordAttempt(delivery, notSentAttempt(delivery, 'the rule was deleted'), {
          status: 'failed',
          nextAttemptAt: null,
        });
      throw new NotFoundError('Event rule not found');
    }
    const { result, attempt } = await this.deliverer.attempt(delivery, delivery.rule);
    const succeeded = isSuccess(result.status);
    await this.log.recordAttempt(delivery, attempt, {
      status: succeeded ? 'succeeded' : 'failed',
      nextAttemptAt: null,
    });
    return { deliveryId: id, succeeded, attempt };
  }
}
