import { grants } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';
import type { RuleEventType } from './event-types';

/**
 * What a rule delivers is data its receiver reads: a rule for the record events sends every
 * record of the workspace, field values (PHI) included, whoever owns it and whatever the
 * type's visibility. Only a caller who could read all of them (records:admin) may point
 * such a rule anywhere; automations:write alone would let a caller grant its receiver more
 * than the caller holds.
 */
const RECORD_EVENT_TYPES: readonly string[] = [
  'data_record:created',
  'data_record:updated',
  'data_record:changed',
  'record.deleted',
];

export function assertMayDeliver(scopes: readonly string[], eventType: RuleEventType, field: string): void {
  if (RECORD_EVENT_TYPES.includes(eventType) && !grants(scopes, 'records:admin'))
    throw new ForbiddenError(
      `${field}: a rule for ${eventType} delivers every record's field values; it needs the scope records:admin`,
    );
}

/**
 * The exact body of a delivery is the record itself for the record events: the webhook log
 * shows it only to those who may read every record (records:admin), not to webhooks:read alone.
 */
export function mayReadDeliveryBody(scopes: readonly string[], eventType: string): boolean {
  return !RECORD_EVENT_TYPES.includes(eventType) || grants(scopes, 'records:admin');
}
