/**
 * The records feature's public surface: what other features may use. Everything else
 * under modules/records is internal (src/app.features.spec.ts enforces it).
 */
export { CheckSignupDataQuery, UpsertSignupRecordsCommand } from './commands/signup-records.messages';
export type { SignupDataCaller, SignupMember } from './commands/signup-records.messages';
export type {
  DataRecordCreated,
  DataRecordDeleted,
  DataRecordEvent,
  DataRecordUpdated,
} from './domain/data-record.events';
export type { DataTypeEvent } from './domain/data-type.events';
export {
  DATA_RECORD_CHANGED,
  DATA_RECORD_CREATED,
  DATA_RECORD_UPDATED,
} from './domain/data-record.public-events';
export type {
  DataRecordBlock,
  DataRecordChangedPayload,
  DataRecordCreatedPayload,
  DataRecordUpdatedPayload,
} from './domain/data-record.public-events';
