import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { SECRET_BOX } from '../delivery/deliverer';
import { WebhookTargets } from '../delivery/webhook-targets';
import { applyFilterChanges, eventRuleDecider } from '../domain/event-rule';
import { eventRuleStream, RuleAuthor, RuleDefinition, RuleFilterChanges } from '../domain/event-rule.events';
import { assertMayDeliver } from '../domain/rule-access.policy';
import { SecretBox } from '../../../core/crypto/secret-box';
import { generateSigningSecret, ruleSecretContext } from '../domain/signature';
import type { RuleInput } from '../http/rule-input';
import { RuleCap } from './rule-cap';

export class CreateEventRuleCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: RuleInput,
    /** The caller's effective scopes (rule-access.policy.ts). */
    readonly scopes: readonly string[],
    /** The caller, whose reach bounds what the rule delivers from now on. */
    readonly author?: RuleAuthor,
  ) {}
}

export class UpdateEventRuleCommand {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
    readonly input: RuleInput,
    readonly scopes: readonly string[],
    readonly expectedRevision?: bigint,
    readonly author?: RuleAuthor,
  ) {}
}

export class DeleteEventRuleCommand {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
    readonly expectedRevision?: bigint,
  ) {}
}

export class RotateEventRuleSecretCommand {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
    /** The caller's effective scopes: a rotation is a change, checked as a PUT is. */
    readonly scopes: readonly string[],
  ) {}
}

/** Creates a rule; its URL is checked (scheme, resolved addresses) before anything is written. */
@CommandHandler(CreateEventRuleCommand)
export class CreateEventRuleHandler implements ICommandHandler<CreateEventRuleCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly targets: WebhookTargets,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    private readonly cap: RuleCap,
  ) {}

  async execute(cmd: CreateEventRuleCommand): Promise<number> {
    const i = cmd.input;
    assertMayDeliver(cmd.scopes, i.eventType!, i.eventTypeField);
    await this.targets.check(i.webhookUrl!, i.webhookUrlField);
    const definition: RuleDefinition = {
      name: i.name!,
      eventType: i.eventType!,
      webhookUrl: i.webhookUrl!,
      payloadFormat: i.payloadFormat ?? 'flat',
      filters: applyFilterChanges({}, i.filters ?? {}),
      maxPerSecond: i.maxPerSecond ?? null,
    };
    const ruleId = await nextId(this.db, 'event_rule_id_seq');
    // At most EVENT_RULES_MAX_PER_WORKSPACE rules per workspace, racing creations included.
    await this.cap.within(cmd.workspaceId, ruleId, () =>
      this.repo.handle({
        streamName: eventRuleStream(ruleId),
        workspaceId: cmd.workspaceId,
        decider: eventRuleDecider,
        command: {
          type: 'CreateEventRule',
          ruleId,
          uuid: randomUUID(),
          workspaceId: cmd.workspaceId,
          definition,
          secret:
            i.signingSecret === undefined ? null : this.box.seal(i.signingSecret, ruleSecretContext(ruleId)),
          author: cmd.author,
          // One event: a rule created stopped is never enabled, not even between two events.
          enabled: i.enabled,
          now: new Date().toISOString(),
        },
      }),
    );
    return ruleId;
  }
}

@CommandHandler(UpdateEventRuleCommand)
export class UpdateEventRuleHandler implements ICommandHandler<UpdateEventRuleCommand, void> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly targets: WebhookTargets,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(cmd: UpdateEventRuleCommand): Promise<void> {
    const i = cmd.input;
    const changes: Partial<Omit<RuleDefinition, 'filters'>> & {
      enabled?: boolean;
      filters?: RuleFilterChanges;
    } = {
      ...(i.name !== undefined ? { name: i.name } : {}),
      ...(i.eventType !== undefined ? { eventType: i.eventType } : {}),
      ...(i.webhookUrl !== undefined ? { webhookUrl: i.webhookUrl } : {}),
      ...(i.payloadFormat !== undefined ? { payloadFormat: i.payloadFormat } : {}),
      ...(i.maxPerSecond !== undefined ? { maxPerSecond: i.maxPerSecond } : {}),
      ...(i.filters !== undefined ? { filters: i.filters } : {}),
      ...(i.enabled !== undefined ? { enabled: i.enabled } : {}),
    };
    await this.repo.handle({
      streamName: eventRuleStream(cmd.ruleId),
      workspaceId: cmd.workspaceId,
      decider: eventRuleDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        // Any change to a record rule (its URL above all) redirects what it delivers: the
        // resulting type decides, as on create. It is read from the stream the change is
        // decided on, never from the read model, which may lag behind a retype.
        from: async (state) => {
          const live = state.status === 'live' && state.workspaceId === cmd.workspaceId;
          const eventType = i.eventType ?? (live ? state.eventType : undefined);
          if (live && eventType)
            assertMayDeliver(cmd.scopes, eventType, i.eventType ? i.eventTypeField : 'eventType');
          if (live && i.webhookUrl !== undefined) await this.targets.check(i.webhookUrl, i.webhookUrlField);
          return {
            type: 'UpdateEventRule' as const,
            ruleId: cmd.ruleId,
            workspaceId: cmd.workspaceId,
            changes,
            secret:
              i.signingSecret === undefined
                ? undefined
                : this.box.seal(i.signingSecret, ruleSecretContext(cmd.ruleId)),
            author: cmd.author,
            now: new Date().toISOString(),
          };
        },
      },
    });
  }
}

@CommandHandler(DeleteEventRuleCommand)
export class DeleteEventRuleHandler implements ICommandHandler<DeleteEventRuleCommand, void> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: DeleteEventRuleCommand): Promise<void> {
    await this.repo.handle({
      streamName: eventRuleStream(cmd.ruleId),
      workspaceId: cmd.workspaceId,
      decider: eventRuleDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'DeleteEventRule',
        ruleId: cmd.ruleId,
        workspaceId: cmd.workspaceId,
        now: new Date().toISOString(),
      },
    });
  }
}

/**
 * A new secret, answered once; the old one keeps signing beside it for
 * WEBHOOK_SECRET_OVERLAP_HOURS, so receivers can switch without losing a delivery.
 */
@CommandHandler(RotateEventRuleSecretCommand)
export class RotateEventRuleSecretHandler implements ICommandHandler<
  RotateEventRuleSecretCommand,
  { secret: string; previousValidUntil: string | null }
> {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(
    cmd: RotateEventRuleSecretCommand,
  ): Promise<{ secret: string; previousValidUntil: string | null }> {
    const secret = generateSigningSecret();
    const { events } = await this.repo.handle({
      streamName: eventRuleStream(cmd.ruleId),
      workspaceId: cmd.workspaceId,
      decider: eventRuleDecider,
      command: {
        // The new secret signs what the rule delivers, and is answered to the caller: only
        // one who may read its events gets it, as only they may set one with PUT (the type
        // is the stream's, as the rotation is decided on).
        from: (state) => {
          if (state.status === 'live' && state.workspaceId === cmd.workspaceId && state.eventType)
            assertMayDeliver(cmd.scopes, state.eventType, 'eventType');
          return {
            type: 'RotateEventRuleSecret' as const,
            ruleId: cmd.ruleId,
            workspaceId: cmd.workspaceId,
            secret: this.box.seal(secret, ruleSecretContext(cmd.ruleId)),
            overlapMs: this.config.webhookSecretOverlapHours * 3600 * 1000,
            now: new Date().toISOString(),
          };
        },
      },
    });
    const rotated = events.find((e) => e.type === 'EventRuleSecretRotated');
    return {
      secret,
      previousValidUntil: rotated?.type === 'EventRuleSecretRotated' ? rotated.data.previousValidUntil : null,
    };
  }
}
