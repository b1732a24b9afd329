import type { GuardedEventData } from '../../../core/events/guarded-event-data';
import type { FieldValue, FieldValues } from './field-values';

export const recordStream = (id: number): string => `record-${id}`;

/** The data type a record event names (what webhooks show of it; no PHI). */
export interface DataTypeRef {
  id: number;
  slug: string;
  name: string;
}

/** The record's member as it stood when the record was written (the webhook's `member` block). */
export interface RecordMember {
  id: number;
  email: string | null;
  phone: string | null;
  name: string | null;
  externalId: string | null;
}

/**
 * Field values are PHI: record events carry them, and they live only in the record's own
 * stream (`record-<id>`), never in another stream, a log line or an error detail.
 */
export interface DataRecordCreated {
  type: 'DataRecordCreated';
  data: {
    recordId: number;
    workspaceId: string;
    dataTypeId: number;
    memberId: number | null;
    externalId: string | null;
    fieldValues: FieldValues;
    dataType: DataTypeRef;
    member: RecordMember | null;
    createdAt: string;
  };
}

export interface DataRecordUpdated {
  type: 'DataRecordUpdated';
  data: {
    recordId: number;
    workspaceId: string;
    dataTypeId: number;
    memberId: number | null;
    externalId: string | null;
    /** The fields this change set (null: cleared). */
    changes: Record<string, FieldValue | null>;
    /** Their values before it (null: had none). */
    previous: Record<string, FieldValue | null>;
    /** Every value after the change. */
    fieldValues: FieldValues;
    dataType: DataTypeRef;
    member: RecordMember | null;
    updatedAt: string;
  };
}

export interface DataRecordDeleted {
  type: 'DataRecordDeleted';
  data: {
    recordId: number;
    workspaceId: string;
    dataTypeId: number;
    memberId: number | null;
    externalId: string | null;
    deletedAt: string;
  };
}

export type DataRecordEvent = DataRecordCreated | DataRecordUpdated | DataRecordDeleted;

/**
 * The keys of record events that hold field values: the event history shows them only to
 * holders of records:admin (the scope that reads every record), so workspace:admin alone
 * does not read PHI through it.
 */
export const RECORD_VALUES_IN_EVENTS: GuardedEventData = {
  eventTypes: ['DataRecordCreated', 'DataRecordUpdated'] satisfies DataRecordEvent['type'][],
  fields: ['fieldValues', 'changes', 'previous'] satisfies (
    keyof DataRecordCreated['data'] | keyof DataRecordUpdated['data']
  )[],
  scope: 'records:admin',
};
