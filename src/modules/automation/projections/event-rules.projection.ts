import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import { EVENT_RULE_EVENT_TYPES, EventRuleEvent } from '../domain/event-rule.events';
import { isRuleEventType } from '../domain/event-types';
import { EventRuleEntity } from './event-rule.entity';

/**
 * The event_rules read model: what the reactor matches against and the API shows. Every
 * event bumps `version` (the ETag) and records the stream revision (If-Match).
 */
@Injectable()
@Projection({ name: 'event-rules', eventTypes: EVENT_RULE_EVENT_TYPES, tables: ['event_rules'] })
export class EventRulesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as EventRuleEvent;
    const repo = em.getRepository(EventRuleEntity);
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'EventRuleCreated': {
        const d = event.data;
        // A rule stored without a known type (an Object prototype name was taken for an
        // alias before that was fixed) matches nothing and has no row to show: its row
        // would break event_type's NOT NULL and stall every rule of every workspace after it.
        // Its later events find no row and change nothing.
        if (!isRuleEventType(d.eventType)) return;
        await repo.upsert(
          {
            id: d.ruleId,
            uuid: d.uuid,
            workspaceId: d.workspaceId,
            name: d.name,
            eventType: d.eventType,
            actionType: d.actionType,
            webhookUrl: d.webhookUrl,
            payloadFormat: d.payloadFormat,
            filters: d.filters,
            maxPerSecond: d.maxPerSecond,
            secret: d.secret,
            author: d.author ?? null,
            previousSecret: null,
            previousSecretUntil: null,
            earlierSecrets: [],
            // Created stopped: disabled from its first event, so no event is ever matched to it.
            enabled: d.enabled !== false,
            enabledSince: new Date(d.createdAt),
            disabledReason: d.enabled === false ? 'manual' : null,
            disabledAt: d.enabled === false ? new Date(d.createdAt) : null,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision: revision,
          },
          ['id'],
        );
        return;
      }
      case 'EventRuleUpdated': {
        const { ruleId, workspaceId: _w, updatedAt, enabled, ...changes } = event.data;
        const row = await repo.findOneBy({ id: ruleId });
        if (!row) return;
        const at = new Date(updatedAt);
        await repo.update(
          { id: ruleId },
          {
            ...changes,
            ...(enabled === undefined || enabled === row.enabled
              ? {}
              : enabled
                ? // Re-enabled: resumes from new events, never from those missed while off.
                  { enabled, enabledSince: at, disabledReason: null, disabledAt: null }
                : { enabled, disabledReason: 'manual', disabledAt: at }),
            updatedAt: at,
            version: () => 'version + 1',
            streamRevision: revision,
          },
        );
        return;
      }
      case 'EventRuleSecretRotated': {
        const d = event.data;
        await repo.update(
          { id: d.ruleId },
          {
            secret: d.secret,
            previousSecret: d.previousSecret,
            previousSecretUntil: d.previousValidUntil ? new Date(d.previousValidUntil) : null,
            earlierSecrets: d.earlierSecrets ?? [],
            updatedAt: new Date(d.rotatedAt),
            version: () => 'version + 1',
            streamRevision: revision,
          },
        );
        return;
      }
      case 'EventRuleDisabled': {
        const d = event.data;
        await repo.update(
          { id: d.ruleId },
          {
            enabled: false,
            disabledReason: d.reason,
            disabledAt: new Date(d.disabledAt),
            updatedAt: new Date(d.disabledAt),
            version: () => 'version + 1',
            streamRevision: revision,
          },
        );
        return;
      }
      case 'EventRuleDeleted':
        await repo.delete({ id: event.data.ruleId });
        return;
    }
  }
}
