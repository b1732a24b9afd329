import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { eventRuleDecider } from './event-rule';
import type { EventRuleCreated, RotatedOutSecret, RuleDefinition } from './event-rule.events';
import { canonicalEventType } from './event-types';

const spec = deciderSpec(eventRuleDecider);
const now = '2026-11-23T10:00:00.000Z';
const workspaceId = '0193a0a0-0000-7000-8000-000000000001';
const definition: RuleDefinition = {
  name: 'Members to CRM',
  eventType: 'member:updated',
  webhookUrl: 'https://hooks.example.com/in',
  payloadFormat: 'flat',
  filters: {},
  maxPerSecond: null,
};
const created: EventRuleCreated = {
  type: 'EventRuleCreated',
  data: {
    ruleId: 7,
    uuid: 'c0ffee00-0000-4000-8000-000000000007',
    workspaceId,
    ...definition,
    actionType: 'webhook:send',
    secret: 'v1.sealed',
    createdAt: now,
  },
};

describe('event rule decider', () => {
  it('creates a rule, enabled, with its sealed secret', () => {
    spec
      .given([])
      .when({
        type: 'CreateEventRule',
        ruleId: 7,
        uuid: created.data.uuid,
        workspaceId,
        definition,
        secret: 'v1.sealed',
        now,
      })
      .then([created]);
  });

  it('refuses chat:summary filters on another type', () => {
    spec
      .given([])
      .when({
        type: 'CreateEventRule',
        ruleId: 7,
        uuid: created.data.uuid,
        workspaceId,
        definition: { ...definition, filters: { channel: 'phone-sms' } },
        secret: null,
        now,
      })
      .thenThrows(ValidationError, /channel, workflowUuid: filter only chat:summary/);
  });

  it('takes filters on chat:summary and drops them when the type changes away from it', () => {
    const summary: EventRuleCreated = {
      ...created,
      data: { ...created.data, eventType: 'chat:summary', filters: { channel: 'phone-sms' } },
    };
    spec
      .given([summary])
      .when({ type: 'UpdateEventRule', ruleId: 7, workspaceId, changes: { eventType: 'chat:created' }, now })
      .then([
        {
          type: 'EventRuleUpdated',
          data: { ruleId: 7, workspaceId, eventType: 'chat:created', filters: {}, updatedAt: now },
        },
      ]);
  });

  it.each([
    [{ channel: 'sms' }, /^channel: must be one of phone-sms, phone-voice, web-chat, email$/],
    [{ channel: 'PHONE-SMS' }, /^channel: must be one of/],
    [{ workflowUuid: 'workflow-1' }, /^workflowUuid: must be a UUID/],
  ])('refuses a chat:summary filter no summary can match (%j)', (filters, detail) => {
    spec
      .given([])
      .when({
        type: 'CreateEventRule',
        ruleId: 7,
        uuid: created.data.uuid,
        workspaceId,
        definition: { ...definition, eventType: 'chat:summary', filters },
        secret: null,
        now,
      })
      .thenThrows(ValidationError, detail);
    spec
      .given([{ ...created, data: { ...created.data, eventType: 'chat:summary' } }])
      .when({ type: 'UpdateEventRule', ruleId: 7, workspaceId, changes: { filters }, now })
      .thenThrows(ValidationError, detail);
  });

  it('refuses a second create, and changes to a rule of another workspace or a deleted one', () => {
    spec
      .given([created])
      .when({ type: 'CreateEventRule', ruleId: 7, uuid: 'x', workspaceId, definition, secret: null, now })
      .thenThrows(ConflictError);
    spec
      .given([created])
      .when({ type: 'UpdateEventRule', ruleId: 7, workspaceId: 'other', changes: { name: 'x' }, now })
      .thenThrows(NotFoundError);
    spec
      .given([created, { type: 'EventRuleDeleted', data: { ruleId: 7, workspaceId, deletedAt: now } }])
      .when({ type: 'DeleteEventRule', ruleId: 7, workspaceId, now })
      .thenThrows(NotFoundError);
  });

  it('rotates the secret, keeping the old one valid for the overlap', () => {
    spec
      .given([created])
      .when({
        type: 'RotateEventRuleSecret',
        ruleId: 7,
        workspaceId,
        secret: 'v1.new',
        overlapMs: 3_600_000,
        now,
      })
      .then([
        {
          type: 'EventRuleSecretRotated',
          data: {
            ruleId: 7,
            workspaceId,
            secret: 'v1.new',
            previousSecret: 'v1.sealed',
            previousValidUntil: '2026-11-23T11:00:00.000Z',
            rotatedAt: now,
          },
        },
      ]);
  });

  it('keeps secrets rotated out earlier signing through their own overlap, a bounded few', () => {
    const rotation = (
      secret: string,
      at: string,
      previous: string,
      until: string,
      earlier?: RotatedOutSecret[],
    ) => ({
      type: 'EventRuleSecretRotated' as const,
      data: {
        ruleId: 7,
        workspaceId,
        secret,
        previousSecret: previous,
        previousValidUntil: until,
        ...(earlier ? { earlierSecrets: earlier } : {}),
        rotatedAt: at,
      },
    });
    const rotate = (at: string) => ({
      type: 'RotateEventRuleSecret' as const,
      ruleId: 7,
      workspaceId,
      secret: 'v1.next',
      overlapMs: 3_600_000,
      now: at,
    });
    const first = rotation('v1.s1', now, 'v1.sealed', '2026-11-23T11:00:00.000Z');
    // A second rotation within the first one's overlap keeps the first secret signing until then.
    spec
      .given([created, first])
      .when(rotate('2026-11-23T10:30:00.000Z'))
      .then([
        rotation('v1.next', '2026-11-23T10:30:00.000Z', 'v1.s1', '2026-11-23T11:30:00.000Z', [
          { secret: 'v1.sealed', validUntil: '2026-11-23T11:00:00.000Z' },
        ]),
      ]);
    const second = rotation('v1.s2', '2026-11-23T10:10:00.000Z', 'v1.s1', '2026-11-23T11:10:00.000Z', [
      { secret: 'v1.sealed', validUntil: '2026-11-23T11:00:00.000Z' },
    ]);
    const third = rotation('v1.s3', '2026-11-23T10:20:00.000Z', 'v1.s2', '2026-11-23T11:20:00.000Z', [
      { secret: 'v1.s1', validUntil: '2026-11-23T11:10:00.000Z' },
      { secret: 'v1.sealed', validUntil: '2026-11-23T11:00:00.000Z' },
    ]);
    // Beyond EARLIER_SECRETS_MAX the oldest goes; past its overlap a secret is dropped.
    spec
      .given([created, first, second, third])
      .when(rotate('2026-11-23T10:25:00.000Z'))
      .then([
        rotation('v1.next', '2026-11-23T10:25:00.000Z', 'v1.s3', '2026-11-23T11:25:00.000Z', [
          { secret: 'v1.s2', validUntil: '2026-11-23T11:20:00.000Z' },
          { secret: 'v1.s1', validUntil: '2026-11-23T11:10:00.000Z' },
        ]),
      ]);
    spec
      .given([created, first, second, third])
      .when(rotate('2026-11-23T11:15:00.000Z'))
      .then([
        rotation('v1.next', '2026-11-23T11:15:00.000Z', 'v1.s3', '2026-11-23T12:15:00.000Z', [
          { secret: 'v1.s2', validUntil: '2026-11-23T11:20:00.000Z' },
        ]),
      ]);
  });

  it('disables an enabled rule once: a second 410 changes nothing', () => {
    const disabled = {
      type: 'EventRuleDisabled' as const,
      data: { ruleId: 7, workspaceId, reason: 'receiver_gone' as const, detail: '410', disabledAt: now },
    };
    spec
      .given([created])
      .when({ type: 'DisableEventRule', ruleId: 7, reason: 'receiver_gone', detail: '410', asOf: now, now })
      .then([disabled]);
    spec
      .given([created, disabled])
      .when({ type: 'DisableEventRule', ruleId: 7, reason: 'receiver_gone', detail: '410', asOf: now, now })
      .then([]);
  });

  it("disables no rule moved to another URL or switched back on after the verdict's attempt", () => {
    const at = (minutes: number) => new Date(Date.parse(now) + minutes * 60_000).toISOString();
    const update = (changes: object, updatedAt: string) => ({
      type: 'EventRuleUpdated' as const,
      data: { ruleId: 7, workspaceId, ...changes, updatedAt },
    });
    const disabled = (disabledAt: string) => ({
      type: 'EventRuleDisabled' as const,
      data: { ruleId: 7, workspaceId, reason: 'receiver_gone' as const, detail: '410', disabledAt },
    });
    const gone = (asOf: string) => ({
      type: 'DisableEventRule' as const,
      ruleId: 7,
      reason: 'receiver_gone' as const,
      detail: '410',
      asOf,
      now: at(10),
    });
    // Moved at minute 2: the 410 to an attempt of minute 1 was the old URL's.
    const moved = update({ webhookUrl: 'https://hooks.example.com/new' }, at(2));
    spec
      .given([created, moved])
      .when(gone(at(1)))
      .then([]);
    spec
      .given([created, moved])
      .when(gone(at(3)))
      .then([disabled(at(10))]);
    // Disabled at 1, switched back on at 2: an answer to an attempt of 1 is no news.
    const reEnabled = update({ enabled: true }, at(2));
    spec
      .given([created, disabled(at(1)), reEnabled])
      .when(gone(at(1)))
      .then([]);
    spec
      .given([created, disabled(at(1)), reEnabled])
      .when(gone(at(3)))
      .then([disabled(at(10))]);
    // Neither a rename nor the same URL again changes the receiver.
    for (const same of [
      update({ name: 'renamed' }, at(2)),
      update({ webhookUrl: definition.webhookUrl }, at(2)),
    ])
      spec
        .given([created, same])
        .when(gone(at(1)))
        .then([disabled(at(10))]);
  });

  it('creates a rule stopped in its one event, disabled from it on', () => {
    const stopped: EventRuleCreated = { ...created, data: { ...created.data, enabled: false } };
    spec
      .given([])
      .when({
        type: 'CreateEventRule',
        ruleId: 7,
        uuid: created.data.uuid,
        workspaceId,
        definition,
        secret: 'v1.sealed',
        enabled: false,
        now,
      })
      .then([stopped]);
    // Already stopped: a 410 or a sustained failure has nothing to disable.
    spec
      .given([stopped])
      .when({ type: 'DisableEventRule', ruleId: 7, reason: 'receiver_gone', detail: '410', asOf: now, now })
      .then([]);
    // enabled: true is the default, carried by no field.
    spec
      .given([])
      .when({
        type: 'CreateEventRule',
        ruleId: 7,
        uuid: created.data.uuid,
        workspaceId,
        definition,
        secret: 'v1.sealed',
        enabled: true,
        now,
      })
      .then([created]);
  });

  it('refuses a maxPerSecond out of range and an empty name', () => {
    spec
      .given([created])
      .when({ type: 'UpdateEventRule', ruleId: 7, workspaceId, changes: { maxPerSecond: 0 }, now })
      .thenThrows(ValidationError, /maxPerSecond/);
    spec
      .given([created])
      .when({ type: 'UpdateEventRule', ruleId: 7, workspaceId, changes: { name: '  ' }, now })
      .thenThrows(ValidationError, /^name/);
  });
});

describe('event types', () => {
  it('maps the dotted aliases to their canonical type and knows the fixed list only', () => {
    expect(canonicalEventType('record.created')).toBe('data_record:created');
    expect(canonicalEventType('record.updated')).toBe('data_record:updated');
    expect(canonicalEventType('task.created')).toBe('task.created');
    expect(canonicalEventType('message:received')).toBe('message:received');
    expect(canonicalEventType('member.updated')).toBeUndefined();
  });

  it("knows no name of Object's prototype, and the decider stores no rule of an unknown type", () => {
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'])
      expect([name, canonicalEventType(name)]).toEqual([name, undefined]);
    const create = (eventType: unknown) => ({
      type: 'CreateEventRule' as const,
      ruleId: 7,
      uuid: created.data.uuid,
      workspaceId,
      definition: { ...definition, eventType: eventType as RuleDefinition['eventType'] },
      secret: null,
      now,
    });
    for (const bad of [Object, 'constructor', undefined, 'record.created'])
      spec
        .given([])
        .when(create(bad))
        .thenThrows(ValidationError, /^eventType: unknown event type/);
    spec
      .given([created])
      .when({
        type: 'UpdateEventRule',
        ruleId: 7,
        workspaceId,
        changes: { eventType: 'toString' as RuleDefinition['eventType'] },
        now,
      })
      .thenThrows(ValidationError, /^eventType: unknown event type/);
  });
});
