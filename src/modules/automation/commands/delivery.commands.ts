import { InjectQueue } from '@nestjs/bullmq';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { DeliveryLog } from '../delivery/delivery-log';
import { Deliverer, isSuccess } from '../delivery/deliverer';
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
  await queue.addBulk(
    reopened.map((id) => ({
      name: 'deliver',
      data: { deliveryId: id },
      opts: { jobId: `redeliver-${id}-${round}` },
    })),
  );
  return reopened;
}

@CommandHandler(RedeliverCommand)
export class RedeliverHandler implements ICommandHandler<RedeliverCommand, void> {
  constructor(
    private readonly db: DataSource,
    private readonly log: DeliveryLog,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookJob>,
  ) {}

  async execute(cmd: RedeliverCommand): Promise<void> {
    const rows = (await this.db.query(
      `SELECT status, is_test FROM webhook_deliveries WHERE id = $1 AND workspace_id = $2`,
      [cmd.deliveryId, cmd.workspaceId],
    )) as { status: string; is_test: boolean }[];
    if (!rows.length || rows[0].is_test) throw new NotFoundError('Delivery not found');
    const pending = () =>
      new ConflictError(
        'The delivery is still being attempted; redeliver it once it has succeeded or failed',
      );
    if (rows[0].status === 'pending') throw pending();
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
    const delivery = (await this.log.load(id))!;
    const { result, attempt } = await this.deliverer.attempt(delivery);
    const succeeded = isSuccess(result.status);
    await this.log.recordAttempt(delivery, attempt, {
      status: succeeded ? 'succeeded' : 'failed',
      nextAttemptAt: null,
    });
    return { deliveryId: id, succeeded, attempt };
  }
}
