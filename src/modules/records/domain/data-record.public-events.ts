import { definePublicEvent } from '../../../core/events/public-events';
import type {
  DataRecordCreated,
  DataRecordDeleted,
  DataRecordUpdated,
  DataTypeRef,
  RecordMember,
} from './data-record.events';
import type { FieldValue, FieldValues } from './field-values';

/** The `dataRecord` block of a delivery: the record as it now stands (SPEC "Events": dataRecord with fields). */
export interface DataRecordBlock {
  id: number;
  dataTypeId: number;
  memberId: number | null;
  externalId: string | null;
  fields: FieldValues;
  createdAt?: string;
  updatedAt: string;
}

export interface DataRecordCreatedPayload {
  dataRecord: DataRecordBlock;
  dataType: DataTypeRef;
  member: RecordMember | null;
}

export interface DataRecordUpdatedPayload extends DataRecordCreatedPayload {
  /** The fields this update changed, and their values before it (null: had none). */
  changedFields: string[];
  previousValues: Record<string, FieldValue | null>;
}

export type DataRecordChangedPayload =
  | (DataRecordCreatedPayload & { operation: 'created' })
  | (DataRecordUpdatedPayload & { operation: 'updated' });

function createdPayload(e: DataRecordCreated): DataRecordCreatedPayload {
  const d = e.data;
  return {
    dataRecord: {
      id: d.recordId,
      dataTypeId: d.dataTypeId,
      memberId: d.memberId,
      externalId: d.externalId,
      fields: d.fieldValues,
      createdAt: d.createdAt,
      updatedAt: d.createdAt,
    },
    dataType: d.dataType,
    member: d.member,
  };
}

function updatedPayload(e: DataRecordUpdated): DataRecordUpdatedPayload {
  const d = e.data;
  return {
    dataRecord: {
      id: d.recordId,
      dataTypeId: d.dataTypeId,
      memberId: d.memberId,
      externalId: d.externalId,
      fields: d.fieldValues,
      updatedAt: d.updatedAt,
    },
    dataType: d.dataType,
    member: d.member,
    changedFields: Object.keys(d.changes),
    previousValues: d.previous,
  };
}

/** data_record:created (SPEC "Events": new data record), from DataRecordCreated. */
export const DATA_RECORD_CREATED = definePublicEvent<
  'data_record:created',
  DataRecordCreatedPayload,
  DataRecordCreated
>({
  name: 'data_record:created',
  description: 'new data record',
  feature: 'records',
  sources: ['DataRecordCreated'],
  payloadFields: ['dataRecord', 'dataType', 'member'],
  payload: createdPayload,
});

/** data_record:updated (data record updated), from DataRecordUpdated: only appended when a value changed. */
export const DATA_RECORD_UPDATED = definePublicEvent<
  'data_record:updated',
  DataRecordUpdatedPayload,
  DataRecordUpdated
>({
  name: 'data_record:updated',
  description: 'data record updated',
  feature: 'records',
  sources: ['DataRecordUpdated'],
  payloadFields: ['dataRecord', 'dataType', 'member', 'changedFields', 'previousValues'],
  payload: updatedPayload,
});

/** data_record:changed (created or updated), with `operation` saying which. */
export const DATA_RECORD_CHANGED = definePublicEvent<
  'data_record:changed',
  DataRecordChangedPayload,
  DataRecordCreated | DataRecordUpdated
>({
  name: 'data_record:changed',
  description: 'created or updated; payload includes an operation field',
  feature: 'records',
  sources: ['DataRecordCreated', 'DataRecordUpdated'],
  payloadFields: ['operation', 'dataRecord', 'dataType', 'member'],
  payload: (e) =>
    e.type === 'DataRecordCreated'
      ? { operation: 'created', ...createdPayload(e) }
      : { operation: 'updated', ...updatedPayload(e) },
});

export interface DataRecordDeletedPayload {
  /** The record that was deleted: its ids only, never its values. */
  dataRecord: {
    id: number;
    dataTypeId: number;
    memberId: number | null;
    externalId: string | null;
    deletedAt: string;
  };
}

/** record.deleted (the quick reference's name; the spec has no canonical twin), from DataRecordDeleted. */
export const RECORD_DELETED = definePublicEvent<
  'record.deleted',
  DataRecordDeletedPayload,
  DataRecordDeleted
>({
  name: 'record.deleted',
  description: 'data record deleted',
  feature: 'records',
  sources: ['DataRecordDeleted'],
  payloadFields: ['dataRecord'],
  payload: (e) => ({
    dataRecord: {
      id: e.data.recordId,
      dataTypeId: e.data.dataTypeId,
      memberId: e.data.memberId,
      externalId: e.data.externalId,
      deletedAt: e.data.deletedAt,
    },
  }),
});

/** The public events of this feature, for its @Feature descriptor. */
export const RECORDS_PUBLIC_EVENTS = [
  DATA_RECORD_CREATED,
  DATA_RECORD_UPDATED,
  DATA_RECORD_CHANGED,
  RECORD_DELETED,
];
