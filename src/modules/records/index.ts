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
/**
 * For the MCP endpoint's tools, which run what the routes run: the route's commands and
 * queries, its body and query DTOs (validated by the same pipe), its caller and path ids.
 */
export { CreateRecordCommand, UpdateRecordCommand, UpsertRecordCommand } from './commands/record.commands';
export type { UpsertOutcome } from './commands/record.commands';
export { GetRecordQuery, ListRecordsQuery } from './queries/record.queries';
export { GetDataTypeQuery, ListDataTypesQuery } from './queries/data-type.queries';
export {
  CreateRecordDto,
  ListRecordsQueryDto,
  UpdateRecordDto,
  UpsertRecordDto,
} from './http/dto/record.dto';
export type { RecordResponse } from './http/dto/record.dto';
export type { DataTypeResponse } from './http/dto/data-type.dto';
export { callerOf as recordCallerOf, pathId as recordPathId } from './http/caller';
