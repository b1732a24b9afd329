import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RuleAuthor } from '../domain/event-rule.events';
import { MicroBatcher } from './micro-batcher';
import type { DeliveryAttempt, DeliveryStatus } from './webhook-delivery.entity';

export interface PendingDelivery {
  id: string;
  workspaceId: string;
  ruleId: number;
  eventId: string | null;
  eventType: string;
  body: string;
  isTest?: boolean;
  createdAt: string;
}

/** A delivery with what its attempt needs of its rule (null when the rule is gone). */
export interface DeliveryToSend {
  id: string;
  workspaceId: string;
  ruleId: number;
  eventType: string;
  status: DeliveryStatus;
  body: string;
  /** Attempts in the current round (since the delivery was last queued): the retry schedule's count. */
  attemptCount: number;
  /** Attempts in the log, every round: the next attempt's number is one more. */
  attemptsLogged: number;
  isTest: boolean;
  rule: {
    webhookUrl: string;
    enabled: boolean;
    secret: string | null;
    previousSecret: string | null;
    previousSecretUntil: Date | null;
    /** Secrets rotated out before the previous one, each signing until its validUntil. */
    earlierSecrets: { secret: string; validUntil: string }[];
    maxPerSecond: number | null;
    enabledSince: Date;
    /** Whose reach bounds what the rule may deliver (null: a rule saved before authors were kept). */
    author: RuleAuthor | null;
  } | null;
  /** Not in the log yet (a job's first run): its row, written with its first attempt. */
  unlogged?: PendingDelivery;
}

interface AttemptRecord {
  id: string;
  unlogged?: PendingDelivery;
  attempt: DeliveryAttempt;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/** The columns the first attempt's insert reads from its JSON parameter (`pending` may carry more). */
const pendingRow = (p: PendingDelivery) => ({
  id: p.id,
  workspaceId: p.workspaceId,
  ruleId: p.ruleId,
  eventId: p.eventId,
  eventType: p.eventType,
  body: p.body,
  createdAt: p.createdAt,
});

export type RuleToSend = NonNullable<DeliveryToSend['rule']>;

/** A delivery `reopen` put back to pending, as it was before. */
export interface Reopened {
  id: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  completedAt: Date | null;
}

const RULE_COLUMNS = `id, version, webhook_url, enabled, secret, previous_secret, previous_secret_until,
                      earlier_secrets, max_per_second, enabled_since, author`;

function ruleOf(r: Record<string, unknown>): RuleToSend {
  return {
    webhookUrl: r.webhook_url as string,
    enabled: r.enabled as boolean,
    secret: r.secret as string | null,
    previousSecret: r.previous_secret as string | null,
    previousSecretUntil: r.previous_secret_until as Date | null,
    earlierSecrets: (r.earlier_secrets as RuleToSend['earlierSecrets'] | null) ?? [],
    maxPerSecond: r.max_per_second as number | null,
    enabledSince: r.enabled_since as Date,
    author: (r.author as RuleAuthor | null) ?? null,
  };
}

function toDelivery(r: Record<string, unknown>, rule: RuleToSend | null): DeliveryToSend {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    ruleId: r.rule_id as number,
    eventType: r.event_type as string,
    status: r.status as DeliveryStatus,
    body: r.body as string,
    attemptCount: r.attempt_count as number,
    attemptsLogged: r.attempts_logged as number,
    isTest: r.is_test as boolean,
    rule,
  };
}

/**
 * The webhook_deliveries table, the automation feature's own log (not a projection: the
 * delivery worker writes it as deliveries happen). Every statement is keyed by the
 * delivery or rule id, and the HTTP reads filter by workspace.
 */
@Injectable()
export class DeliveryLog {
  constructor(private readonly db: DataSource) {}

  /** New pending deliveries; one already logged for the same (event, rule) is left as it is. */
  async insertPending(rows: readonly PendingDelivery[]): Promise<void> {
    if (!rows.length) return;
    const params: unknown[] = [];
    const values = rows.map((r) => {
      params.push(
        r.id,
        r.workspaceId,
        r.ruleId,
        r.eventId,
        r.eventType,
        r.body,
        r.isTest ?? false,
        r.createdAt,
      );
      const n = params.length;
      return `($${n - 7}, $${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, 'pending', $${n - 2}, $${n - 1}, $${n})`;
    });
    await this.db.query(
      `INSERT INTO webhook_deliveries (id, workspace_id, rule_id, event_id, event_type, status, body, is_test, created_at)
       VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`,
      params,
    );
  }

  /**
   * The delivery with its rule. With `pending` (a job's first run), a delivery not in the
   * log yet is answered from it, marked `unlogged`: its row is written with its first
   * attempt (recordAttempt), in one statement, not an insert before the POST and an
   * update after it. A delivery already logged (a run of this job, or of a replay's, got
   * that far) is answered from the log, so a finished one is never sent again. Calls made
   * together share one statement (MicroBatcher).
   */
  load(id: string, pending?: PendingDelivery): Promise<DeliveryToSend | undefined> {
    return this.loads.add({ id, pending });
  }

  /**
   * Appends one attempt and sets the delivery's state after it (an unlogged delivery's
   * row is inserted with it); settles once committed (durable). A crash before that
   * leaves the job to run again, with the same webhook-id.
   */
  recordAttempt(
    delivery: Pick<DeliveryToSend, 'id' | 'unlogged'>,
    attempt: DeliveryAttempt,
    outcome: { status: DeliveryStatus; nextAttemptAt: Date | null },
  ): Promise<void> {
    return this.records.add({ id: delivery.id, unlogged: delivery.unlogged, attempt, ...outcome });
  }

  private readonly loads = new MicroBatcher<
    { id: string; pending?: PendingDelivery },
    DeliveryToSend | undefined
  >((items) => this.loadBatch(items));

  private readonly records = new MicroBatcher<AttemptRecord, void>(async (items) => {
    // One statement per round of distinct ids (an UPDATE ... FROM applies one row per target).
    for (let rest = items; rest.length;) {
      const seen = new Set<string>();
      const round: AttemptRecord[] = [];
      const later: AttemptRecord[] = [];
      for (const r of rest) {
        (seen.has(r.id) ? later : round).push(r);
        seen.add(r.id);
      }
      const inserts = round.filter((r) => r.unlogged);
      const updates = round.filter((r) => !r.unlogged);
      await Promise.all([
        inserts.length ? this.insertWithAttempt(inserts) : undefined,
        updates.length ? this.recordBatch(updates) : undefined,
      ]);
      rest = later;
    }
    return items.map(() => undefined);
  });

  private async loadBatch(
    items: readonly { id: string; pending?: PendingDelivery }[],
  ): Promise<(DeliveryToSend | undefined)[]> {
    const ruleOf = new Map<string, number | null>();
    for (const i of items) if (!ruleOf.get(i.id)) ruleOf.set(i.id, i.pending?.ruleId ?? null);
    const ids = [...ruleOf.keys()];
    const ruleIds = [...ruleOf.values()];
    // No body goes to the database here: a first run's body is in its job. Of the rule,
    // only its version: its columns come from rulesAt (read once per version).
    const rows = (await this.db.query(
      `SELECT v.id AS v_id, d.id, d.workspace_id, d.rule_id, d.event_type, d.status, d.body, d.attempt_count, d.is_test,
              jsonb_array_length(d.attempts) AS attempts_logged,
              r.id AS r_id, r.version AS r_version
         FROM unnest($1::uuid[], $2::int[]) AS v(id, rule_id)
         LEFT JOIN webhook_deliveries d ON d.id = v.id
         LEFT JOIN event_rules r ON r.id = COALESCE(d.rule_id, v.rule_id)`,
      [ids, ruleIds],
    )) as Record<string, unknown>[];
    const versions = new Map<number, number>();
    for (const r of rows) if (r.r_id !== null) versions.set(r.r_id as number, r.r_version as number);
    const rules = await this.rulesAt(versions);
    const byId = new Map(rows.map((r) => [r.v_id as string, r]));
    return items.map((i) => {
      const r = byId.get(i.id);
      const rule = r && r.r_id !== null ? (rules.get(r.r_id as number) ?? null) : null;
      if (r && r.id !== null) return toDelivery(r, rule);
      if (!r || !i.pending) return undefined;
      const p = i.pending;
      return {
        id: p.id,
        workspaceId: p.workspaceId,
        ruleId: p.ruleId,
        eventType: p.eventType,
        status: 'pending',
        body: p.body,
        attemptCount: 0,
        attemptsLogged: 0,
        isTest: false,
        rule,
        unlogged: p,
      };
    });
  }

  /** Rules by id as of (at least) the given read-model versions (every change to a rule bumps its version). */
  private readonly rulesSeen = new Map<number, { version: number; rule: RuleToSend }>();

  private async rulesAt(versions: ReadonlyMap<number, number>): Promise<Map<number, RuleToSend>> {
    const rules = new Map<number, RuleToSend>();
    const stale: number[] = [];
    for (const [id, version] of versions) {
      const seen = this.rulesSeen.get(id);
      if (seen && seen.version >= version) rules.set(id, seen.rule);
      else stale.push(id);
    }
    if (!stale.length) return rules;
    const rows = (await this.db.query(`SELECT ${RULE_COLUMNS} FROM event_rules WHERE id = ANY($1::int[])`, [
      stale,
    ])) as Record<string, unknown>[];
    for (const r of rows) {
      const rule = ruleOf(r);
      if (this.rulesSeen.size >= 1000) this.rulesSeen.clear();
      this.rulesSeen.set(r.id as number, { version: r.version as number, rule });
      rules.set(r.id as number, rule);
    }
    return rules;
  }

  /** First attempts of unlogged deliveries: their rows with the attempt, one statement. */
  private async insertWithAttempt(items: readonly AttemptRecord[]): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_deliveries AS d (id, workspace_id, rule_id, event_id, event_type, status, body, is_test,
                                            created_at, attempts, attempt_count, last_status, next_attempt_at, completed_at)
       SELECT v.id, v."workspaceId", v."ruleId", v."eventId", v."eventType", v.status, v.body, false, v."createdAt",
              jsonb_build_array(v.attempt), 1, v.last_status, v.next_attempt_at,
              CASE WHEN v.status = 'pending' THEN NULL ELSE now() END
         FROM json_to_recordset($1::json)
              AS v(id uuid, "workspaceId" uuid, "ruleId" int, "eventId" uuid, "eventType" text, body text,
                   "createdAt" timestamptz, attempt jsonb, last_status int, status text, next_attempt_at timestamptz)
       -- logged meanwhile (another run of the same job): the attempt is appended, as recordBatch does
       ON CONFLICT (id) DO UPDATE
          SET attempts = d.attempts || EXCLUDED.attempts, attempt_count = d.attempt_count + 1,
              last_status = EXCLUDED.last_status, status = EXCLUDED.status,
              next_attempt_at = EXCLUDED.next_attempt_at, completed_at = EXCLUDED.completed_at`,
      // One JSON text, not one array per column: pg escapes every quote of every body in an array literal.
      [
        JSON.stringify(
          items.map((i) => ({
            ...pendingRow(i.unlogged!),
            attempt: i.attempt,
            last_status: i.attempt.responseStatus,
            status: i.status,
            next_attempt_at: i.nextAttemptAt,
          })),
        ),
      ],
    );
  }

  private async recordBatch(items: readonly AttemptRecord[]): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries d
          SET attempts = d.attempts || jsonb_build_array(v.attempt), attempt_count = d.attempt_count + 1,
              last_status = v.last_status, status = v.status, next_attempt_at = v.next_attempt_at,
              completed_at = CASE WHEN v.status = 'pending' THEN NULL ELSE now() END
         FROM json_to_recordset($1::json)
              AS v(id uuid, attempt jsonb, last_status int, status text, next_attempt_at timestamptz)
        WHERE d.id = v.id`,
      // One JSON text (see insertWithAttempt): the attempts' headers are full of quotes.
      [
        JSON.stringify(
          items.map((i) => ({
            id: i.id,
            attempt: i.attempt,
            last_status: i.attempt.responseStatus,
            status: i.status,
            next_attempt_at: i.nextAttemptAt,
          })),
        ),
      ],
    );
  }

  /**
   * Back to pending for another round of attempts (redeliver, recover); same id, so same
   * webhook-id. Only those not pending already: of racing requests one reopens a delivery.
   * Answers those reopened, each with its state before, for `putBack`.
   */
  async reopen(ids: readonly string[]): Promise<Reopened[]> {
    if (!ids.length) return [];
    const rows = (await this.db.query(
      `UPDATE webhook_deliveries d
          SET status = 'pending', attempt_count = 0, next_attempt_at = now(), completed_at = NULL,
              redeliveries = d.redeliveries + 1
         FROM (SELECT id, status, attempt_count, next_attempt_at, completed_at FROM webhook_deliveries
                WHERE id = ANY($1) AND status <> 'pending' FOR UPDATE) AS before
        WHERE d.id = before.id
        RETURNING before.id, before.status, before.attempt_count AS "attemptCount",
                  before.next_attempt_at AS "nextAttemptAt", before.completed_at AS "completedAt"`,
      [ids],
    )) as [Reopened[], number];
    return rows[0];
  }

  /**
   * Undoes `reopen` for deliveries whose jobs could not be queued (Redis failed): pending
   * with no job, nothing would ever attempt them, and redeliver (409 while pending) and
   * recover (failed ones only) could not reach them again. Those a run took up meanwhile
   * (an attempt counted) are left to it.
   */
  async putBack(reopened: readonly Reopened[]): Promise<void> {
    if (!reopened.length) return;
    await this.db.query(
      `UPDATE webhook_deliveries d
          SET status = v.status, attempt_count = v."attemptCount", next_attempt_at = v."nextAttemptAt",
              completed_at = v."completedAt", redeliveries = d.redeliveries - 1
         FROM json_to_recordset($1::json)
              AS v(id uuid, status text, "attemptCount" int, "nextAttemptAt" timestamptz, "completedAt" timestamptz)
        WHERE d.id = v.id AND d.status = 'pending' AND d.attempt_count = 0`,
      [JSON.stringify(reopened)],
    );
  }

  /** Deliveries of a rule that ended failed since a time (recover), oldest first. */
  async failedSince(workspaceId: string, ruleId: number, since: string): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT id FROM webhook_deliveries
        WHERE workspace_id = $1 AND rule_id = $2 AND status = 'failed' AND NOT is_test AND completed_at >= $3
        ORDER BY created_at`,
      [workspaceId, ruleId, since],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * The failing streak of a rule: the first and last failure of real deliveries since its
   * last success (and since it was last enabled); null when the last outcome succeeded.
   */
  async failingStreak(ruleId: number, since: Date): Promise<{ first: Date; last: Date } | null> {
    const rows = (await this.db.query(
      `WITH last_ok AS (
         SELECT max(completed_at) AS at FROM webhook_deliveries
          WHERE rule_id = $1 AND status = 'succeeded' AND NOT is_test)
       SELECT min(d.completed_at) AS first, max(d.completed_at) AS last
         FROM webhook_deliveries d, last_ok
        WHERE d.rule_id = $1 AND d.status = 'failed' AND NOT d.is_test AND d.completed_at >= $2
          AND (last_ok.at IS NULL OR d.completed_at > last_ok.at)`,
      [ruleId, since],
    )) as { first: Date | null; last: Date | null }[];
    const r = rows[0];
    return r?.first && r.last ? { first: r.first, last: r.last } : null;
  }
}
