import { ValidationError } from '../../../core/http/domain-errors';
import type { PayloadFormat, RuleFilterChanges } from '../domain/event-rule.events';
import { ACCEPTED_EVENT_TYPES, canonicalEventType, RuleEventType } from '../domain/event-types';
import { signingSecretProblem } from '../domain/signature';
import type { UpdateEventRuleDto } from './event-rule.dto';

/** A rule as either form of the request gives it, event type already canonical. */
export interface RuleInput {
  name?: string;
  eventType?: RuleEventType;
  webhookUrl?: string;
  /** Which field carried the URL, for a 400 that names what the client sent. */
  webhookUrlField: string;
  /** Which field carried the event type (eventType or trigger). */
  eventTypeField: string;
  payloadFormat?: PayloadFormat;
  /** null (PUT only): removes the limit. */
  maxPerSecond?: number | null;
  /** null removes a filter (PUT only; a 400 on create). */
  filters?: RuleFilterChanges;
  signingSecret?: string;
  enabled?: boolean;
}

function one<T>(long: [string, T | undefined], short: [string, T | undefined]): [string, T | undefined] {
  if (long[1] !== undefined && short[1] !== undefined)
    throw new ValidationError(
      `${short[0]}: give ${long[0]} (long form) or ${short[0]} (short form), not both`,
    );
  return long[1] !== undefined ? long : short[1] !== undefined ? short : [long[0], undefined];
}

/**
 * Maps the long form (`name, eventType, actionType, actionParams`) and the short form
 * (`trigger, action, webhookUrl`) to one input; the same field given both ways is a 400.
 * On create, the type and URL are required, and the long form needs a name.
 */
export function ruleInputOf(body: UpdateEventRuleDto, mode: 'create' | 'update'): RuleInput {
  const p = body.actionParams ?? {};
  const [typeField, rawType] = one(['eventType', body.eventType], ['trigger', body.trigger]);
  const [urlField, webhookUrl] = one(
    ['actionParams.webhookUrl', p.webhookUrl],
    ['webhookUrl', body.webhookUrl],
  );
  const [secretField, signingSecret] = one(
    ['actionParams.signingSecret', p.signingSecret],
    ['signingSecret', body.signingSecret],
  );
  one(['actionType', body.actionType], ['action', body.action]);
  const secretProblem = signingSecret === undefined ? null : signingSecretProblem(signingSecret);
  if (secretProblem) throw new ValidationError(`${secretField}: ${secretProblem}`);

  let eventType: RuleEventType | undefined;
  if (rawType !== undefined) {
    eventType = canonicalEventType(rawType);
    if (!eventType)
      throw new ValidationError(
        `${typeField}: unknown event type "${rawType.slice(0, 64)}"; valid: ${ACCEPTED_EVENT_TYPES.join(', ')}`,
      );
  }
  let name = body.name;
  if (mode === 'create') {
    if (!eventType) throw new ValidationError('eventType: required (or trigger in the short form)');
    if (webhookUrl === undefined)
      throw new ValidationError('actionParams.webhookUrl: required (or webhookUrl in the short form)');
    if (name === undefined) {
      if (typeField === 'eventType') throw new ValidationError('name: required');
      name = rawType;
    }
    // null removes a filter or the rate limit on PUT; a new rule has none to remove.
    for (const [field, value] of [
      ['channel', body.channel],
      ['workflowUuid', body.workflowUuid],
      ['actionParams.maxPerSecond', p.maxPerSecond],
    ] as const)
      if (value === null)
        throw new ValidationError(`${field}: must not be null when creating a rule (leave it out for none)`);
  }
  const filters =
    body.channel !== undefined || body.workflowUuid !== undefined
      ? {
          ...(body.channel !== undefined ? { channel: body.channel } : {}),
          // Workflow uuids are lower case; an upper-case filter means the same workflow.
          ...(body.workflowUuid !== undefined
            ? {
                workflowUuid:
                  typeof body.workflowUuid === 'string' ? body.workflowUuid.toLowerCase() : body.workflowUuid,
              }
            : {}),
        }
      : undefined;
  return {
    name,
    eventType,
    webhookUrl,
    webhookUrlField: urlField,
    eventTypeField: typeField,
    payloadFormat: p.payloadFormat,
    maxPerSecond: p.maxPerSecond,
    filters,
    signingSecret,
    enabled: body.enabled,
  };
}
