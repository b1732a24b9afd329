import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { QueryBus } from '@nestjs/cqrs';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { createHash } from 'node:crypto';
import type { DomainEvent } from '../../../core/cqrs/decider';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { PublicEventCatalogue, PublicEventDefinition } from '../../../core/events/public-events';
import { jobIdFor, Reactor, ReactorDefinition, ReactorHandler } from '../../../core/reactors/reactor';
import { GetWorkspaceNamesQuery } from '../../workspaces';
import type { PendingDelivery } from '../delivery/delivery-log';
import { EVENT_RULE_EVENT_TYPES, PayloadFormat, RuleFilters } from '../domain/event-rule.events';
import { buildPayload, matchesFilters } from '../domain/payload';
import { WEBHOOK_QUEUE, WebhookJob } from '../workers/webhook-delivery.processor';

/** Namespace of delivery ids: uuid v5 of "<event id>/<rule id>", so a replay finds the same delivery. */
export const DELIVERY_NAMESPACE = '5b0f8a52-2d0e-4d7c-9a3f-6c1e0b7d9e41';
const NAMESPACE_BYTES = Buffer.from(DELIVERY_NAMESPACE.replace(/-/g, ''), 'hex');

/** RFC 4122 uuid v5 (as `uuid`'s v5, with the namespace parsed once: this runs per delivery). */
export function deliveryIdFor(eventId: string, ruleId: number): string {
  const h = createHash('sha1').update(NAMESPACE_BYTES).update(`${eventId}/${ruleId}`, 'utf8').digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString('hex', 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** core's jobIdFor(event, `rule:<id>`), its hashed target computed once per rule. */
const jobIdSuffixes = new Map<number, string>();
export function deliveryJobIdFor(event: Pick<StoredEvent, 'id'>, ruleId: number): string {
  let suffix = jobIdSuffixes.get(ruleId);
  if (suffix === undefined) {
    // jobIdFor({ id: '' }, target) is `evt--<hash>`: the part after the event id.
    suffix = jobIdFor({ id: '' }, `rule:${ruleId}`).slice('evt-'.length);
    if (jobIdSuffixes.size >= 10_000) jobIdSuffixes.clear();
    jobIdSuffixes.set(ruleId, suffix);
  }
  return `evt-${event.id}${suffix}`;
}

/**
 * The internal event types it follows are those the catalogue says give rise to a public
 * event, known only once the catalogue is built from the features of this build: the
 * constructor fills them in before core's registry reads the definition (onModuleInit).
 * A feature that declares a public event thus makes it deliverable with no change here.
 */
const RULE_CACHE_MS = 2000;

const DEFINITION: ReactorDefinition & { eventTypes: string[] } = {
  name: 'automation-webhooks',
  eventTypes: [],
};

interface MatchingRule {
  id: number;
  uuid: string;
  name: string;
  event_type: string;
  payload_format: PayloadFormat;
  filters: RuleFilters;
  enabled_since: Date;
}

/**
 * Stored event → the public events it gives rise to (catalogue) → the workspace's enabled
 * rules of those types → one BullMQ job per (event, rule) carrying the delivery (its id
 * and exact body), the job id from both, so replaying the reactor enqueues nothing twice.
 * A rule matches events from when it was (re-)enabled on, so a replay or a re-enable
 * never delivers what happened before.
 */
@Injectable()
@Reactor(DEFINITION)
export class DeliverWhenMatchedReactor implements ReactorHandler {
  private readonly workspaceNames = new Map<string, { name: string | null; at: number }>();
  private readonly rules = new Map<string, { rules: MatchingRule[]; at: number }>();
  private readonly bySource = new Map<string, readonly PublicEventDefinition[]>();

  constructor(
    private readonly catalogue: PublicEventCatalogue,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookJob>,
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {
    const sources = new Set(catalogue.list().flatMap((d) => d.sources as readonly string[]));
    // Rule events only empty the cache of their workspace's rules (see rulesOf).
    for (const type of EVENT_RULE_EVENT_TYPES) sources.add(type);
    DEFINITION.eventTypes.splice(0, DEFINITION.eventTypes.length, ...[...sources].sort());
  }

  async react(stored: StoredEvent): Promise<void> {
    await this.reactBatch([stored]);
  }

  /** The whole batch's jobs in one Redis call. */
  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    const jobs: { name: string; data: WebhookJob; opts: { jobId: string } }[] = [];
    for (const stored of events) {
      for (const d of await this.match(stored))
        jobs.push({
          name: 'deliver',
          data: { deliveryId: d.id, pending: d },
          opts: { jobId: deliveryJobIdFor(stored, d.ruleId) },
        });
    }
    // The job carries its delivery's row, which the worker writes to the log: no statement
    // per event on this sequential path, which every workspace's deliveries go through.
    if (jobs.length) await this.queue.addBulk(jobs);
  }

  private async match(stored: StoredEvent): Promise<PendingDelivery[]> {
    const workspaceId = stored.metadata.workspaceId;
    if ((EVENT_RULE_EVENT_TYPES as readonly string[]).includes(stored.type)) {
      this.rules.delete(workspaceId);
      return [];
    }
    // fromEvent: one internal type may give rise to a public event only sometimes
    // (MessageReceived is email.received only when it came by mail).
    const publics = this.publicsOf(stored);
    if (!publics.length || !workspaceId) return [];
    const names = new Set<string>(publics.map((d) => d.name));
    const rules = (await this.rulesOf(workspaceId)).filter((r) => names.has(r.event_type));
    if (!rules.length) return [];
    const occurredAt = new Date(stored.metadata.occurredAt);
    const workspace = { uuid: workspaceId, name: await this.workspaceName(workspaceId) };
    const event = { type: stored.type, data: stored.data } as DomainEvent;
    const pending: PendingDelivery[] = [];
    for (const rule of rules) {
      if (rule.enabled_since > occurredAt) continue;
      const definition = publics.find((d) => d.name === rule.event_type)!;
      const blocks = definition.payload(event);
      if (!matchesFilters(rule.filters, blocks)) continue;
      const body = buildPayload(
        rule.payload_format,
        {
          eventId: stored.id,
          event: definition.name,
          timestamp: stored.metadata.occurredAt,
          workspace,
          eventRule: { id: rule.id, uuid: rule.uuid, name: rule.name },
        },
        blocks,
      );
      pending.push({
        id: deliveryIdFor(stored.id, rule.id),
        workspaceId,
        ruleId: rule.id,
        eventId: stored.id,
        eventType: definition.name,
        body: JSON.stringify(body),
        createdAt: new Date().toISOString(),
      });
    }
    return pending;
  }

  /** catalogue.fromEvent, with the per-type lookup done once per type (the catalogue is fixed). */
  private publicsOf(stored: StoredEvent): readonly PublicEventDefinition[] {
    let candidates = this.bySource.get(stored.type);
    if (!candidates) this.bySource.set(stored.type, (candidates = this.catalogue.fromSource(stored.type)));
    if (!candidates.length) return candidates;
    const event = { type: stored.type, data: stored.data } as DomainEvent;
    return candidates.filter((d) => d.appliesTo?.(event) ?? true);
  }

  /**
   * The workspace's enabled rules, cached: a burst of events asks once. The reactor reads
   * events in global order, so a rule's own event, which empties the entry, comes before
   * any event after it; the read model it then reads has usually caught up (the write that
   * made the rule waited for it), and the TTL bounds anything else.
   */
  private async rulesOf(workspaceId: string): Promise<MatchingRule[]> {
    const cached = this.rules.get(workspaceId);
    if (cached && Date.now() - cached.at < RULE_CACHE_MS) return cached.rules;
    const rules = (await this.db.query(
      `SELECT id, uuid, name, event_type, payload_format, filters, enabled_since FROM event_rules
        WHERE workspace_id = $1 AND enabled ORDER BY id`,
      [workspaceId],
    )) as MatchingRule[];
    if (this.rules.size > 10_000) this.rules.clear();
    this.rules.set(workspaceId, { rules, at: Date.now() });
    return rules;
  }

  /** Cached for a few seconds: a burst of events of one workspace asks once. */
  private async workspaceName(workspaceId: string): Promise<string | null> {
    const cached = this.workspaceNames.get(workspaceId);
    if (cached && Date.now() - cached.at < 5000) return cached.name;
    const names = await this.queries.execute<GetWorkspaceNamesQuery, Map<string, string>>(
      new GetWorkspaceNamesQuery([workspaceId]),
    );
    const name = names.get(workspaceId) ?? null;
    if (this.workspaceNames.size > 10_000) this.workspaceNames.clear();
    this.workspaceNames.set(workspaceId, { name, at: Date.now() });
    return name;
  }
}
