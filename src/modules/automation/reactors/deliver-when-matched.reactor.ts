import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { QueryBus } from '@nestjs/cqrs';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { v5 as uuidv5 } from 'uuid';
import type { DomainEvent } from '../../../core/cqrs/decider';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { PublicEventCatalogue } from '../../../core/events/public-events';
import { jobIdFor, Reactor, ReactorDefinition, ReactorHandler } from '../../../core/reactors/reactor';
import { GetWorkspaceNamesQuery } from '../../workspaces';
import { DeliveryLog, PendingDelivery } from '../delivery/delivery-log';
import type { PayloadFormat, RuleFilters } from '../domain/event-rule.events';
import { buildPayload, matchesFilters } from '../domain/payload';
import { WEBHOOK_QUEUE, WebhookJob } from '../workers/webhook-delivery.processor';

/** Namespace of delivery ids: uuid v5 of "<event id>/<rule id>", so a replay finds the same delivery. */
const DELIVERY_NAMESPACE = '5b0f8a52-2d0e-4d7c-9a3f-6c1e0b7d9e41';
export const deliveryIdFor = (eventId: string, ruleId: number): string =>
  uuidv5(`${eventId}/${ruleId}`, DELIVERY_NAMESPACE);

/**
 * The internal event types it follows are those the catalogue says give rise to a public
 * event, known only once the catalogue is built from the features of this build: the
 * constructor fills them in before core's registry reads the definition (onModuleInit).
 * A feature that declares a public event thus makes it deliverable with no change here.
 */
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
 * rules of those types → one pending delivery (its exact body) and one BullMQ job per
 * (event, rule), the job id from both, so replaying the reactor enqueues nothing twice.
 * A rule matches events from when it was (re-)enabled on, so a replay or a re-enable
 * never delivers what happened before.
 */
@Injectable()
@Reactor(DEFINITION)
export class DeliverWhenMatchedReactor implements ReactorHandler {
  private readonly workspaceNames = new Map<string, { name: string | null; at: number }>();

  constructor(
    private readonly catalogue: PublicEventCatalogue,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookJob>,
    private readonly db: DataSource,
    private readonly log: DeliveryLog,
    private readonly queries: QueryBus,
  ) {
    const sources = new Set(catalogue.list().flatMap((d) => d.sources as readonly string[]));
    DEFINITION.eventTypes.splice(0, DEFINITION.eventTypes.length, ...[...sources].sort());
  }

  async react(stored: StoredEvent): Promise<void> {
    const publics = this.catalogue.fromSource(stored.type);
    const workspaceId = stored.metadata.workspaceId;
    if (!publics.length || !workspaceId) return;
    const rules = (await this.db.query(
      `SELECT id, uuid, name, event_type, payload_format, filters, enabled_since FROM event_rules
        WHERE workspace_id = $1 AND enabled AND event_type = ANY($2) ORDER BY id`,
      [workspaceId, publics.map((d) => d.name)],
    )) as MatchingRule[];
    if (!rules.length) return;
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
    await this.log.insertPending(pending);
    await this.queue.addBulk(
      pending.map((d) => ({
        name: 'deliver',
        data: { deliveryId: d.id },
        opts: { jobId: jobIdFor(stored, `rule:${d.ruleId}`) },
      })),
    );
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
