import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { AutomationRuleAuthors1764000009000 } from './automation-authors.migration';
import { AutomationEarlierSecrets1764000011300 } from './automation-earlier-secrets.migration';
import { Automation1764000007400 } from './automation.migration';
import {
  RecoverDeliveriesHandler,
  RedeliverHandler,
  TestEventRuleHandler,
} from './commands/delivery.commands';
import {
  CreateEventRuleHandler,
  DeleteEventRuleHandler,
  RotateEventRuleSecretHandler,
  UpdateEventRuleHandler,
} from './commands/event-rule.commands';
import { AuthorReach } from './delivery/author-reach';
import { Deliverer, SECRET_BOX } from './delivery/deliverer';
import { DeliveryLog } from './delivery/delivery-log';
import { RulePacer } from './delivery/pacer';
import { RuleCap } from './commands/rule-cap';
import { WebhookDeliveryEntity } from './delivery/webhook-delivery.entity';
import { WebhookSender } from './delivery/webhook-sender';
import { WebhookTargets } from './delivery/webhook-targets';
import { SecretBox } from '../../core/crypto/secret-box';
import { EventRulesController } from './http/event-rules.controller';
import { WebhookLogsController } from './http/webhook-logs.controller';
import { EventRuleEntity } from './projections/event-rule.entity';
import { EventRulesProjection } from './projections/event-rules.projection';
import {
  GetEventRuleHandler,
  GetWebhookLogHandler,
  ListEventRulesHandler,
  ListWebhookLogsHandler,
} from './queries/automation.queries';
import { DeliverWhenMatchedReactor } from './reactors/deliver-when-matched.reactor';
import { WEBHOOK_QUEUE, WebhookDeliveryProcessor } from './workers/webhook-delivery.processor';

/**
 * Event rules and their webhooks: rules (event-sourced, read model event_rules), the
 * reactor that matches stored events to rules through the public event catalogue, the
 * queue worker that delivers, signs and retries, and the delivery log.
 */
@Feature({
  name: 'automation',
  entities: [EventRuleEntity, WebhookDeliveryEntity],
  migrations: [
    Automation1764000007400,
    AutomationRuleAuthors1764000009000,
    AutomationEarlierSecrets1764000011300,
  ],
  versionedResources: ['event_rules'],
})
@Module(
  withQueues(
    { queues: [WEBHOOK_QUEUE], processors: [WebhookDeliveryProcessor] },
    {
      controllers: [EventRulesController, WebhookLogsController],
      providers: [
        {
          provide: SECRET_BOX,
          inject: [APP_CONFIG],
          useFactory: (c: AppConfig) => new SecretBox(c.secretsEncryptionKey),
        },
        WebhookTargets,
        WebhookSender,
        Deliverer,
        DeliveryLog,
        RulePacer,
        RuleCap,
        AuthorReach,
        EventRulesProjection,
        DeliverWhenMatchedReactor,
        CreateEventRuleHandler,
        UpdateEventRuleHandler,
        DeleteEventRuleHandler,
        RotateEventRuleSecretHandler,
        RedeliverHandler,
        RecoverDeliveriesHandler,
        TestEventRuleHandler,
        ListEventRulesHandler,
        GetEventRuleHandler,
        ListWebhookLogsHandler,
        GetWebhookLogHandler,
      ],
    },
  ),
)
export class AutomationModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    event_rules: true;
  }
}
