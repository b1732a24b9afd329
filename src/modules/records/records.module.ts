import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { BulkRecordsHandler } from './commands/bulk-records.command';
import {
  CreateDataTypeHandler,
  DeleteDataTypeHandler,
  UpdateDataTypeHandler,
} from './commands/data-type.commands';
import { CreateRecordGrantHandler, RevokeRecordGrantHandler } from './commands/record-grant.commands';
import { RecordWriter } from './commands/record-writer.service';
import {
  CreateRecordAnsweredHandler,
  CreateRecordHandler,
  DeleteRecordHandler,
  UpdateRecordHandler,
  UpsertRecordHandler,
} from './commands/record.commands';
import { CheckSignupDataHandler, UpsertSignupRecordsHandler } from './commands/signup-records.command';
import { RECORD_VALUES_IN_EVENTS } from './domain/data-record.events';
import { RECORDS_PUBLIC_EVENTS } from './domain/data-record.public-events';
import { DataTypesController } from './http/data-types.controller';
import { RecordGrantsController } from './http/record-grants.controller';
import { RecordsController } from './http/records.controller';
import { RecordGrantsProjection } from './projections/record-grants.projection';
import { DataRecordEntity, DataTypeEntity, RecordGrantEntity } from './projections/records.entities';
import { RecordsProjection } from './projections/records.projection';
import { GetDataTypeHandler, ListDataTypesHandler } from './queries/data-type.queries';
import { GetRecordGrantHandler, ListRecordGrantsHandler } from './queries/record-grant.queries';
import { GetRecordHandler, ListRecordsHandler } from './queries/record.queries';
import { RecordsTables1764000007000 } from './records.migration';

/** Data types (forms) and data records, a CRM with upsert, bulk import, search and sharing grants. */
@Feature({
  name: 'records',
  entities: [DataTypeEntity, DataRecordEntity, RecordGrantEntity],
  migrations: [RecordsTables1764000007000],
  versionedResources: ['data_types', 'data_records'],
  publicEvents: RECORDS_PUBLIC_EVENTS,
  guardedEventData: [RECORD_VALUES_IN_EVENTS],
})
@Module({
  controllers: [DataTypesController, RecordsController, RecordGrantsController],
  providers: [
    RecordsProjection,
    RecordGrantsProjection,
    RecordWriter,
    CreateDataTypeHandler,
    UpdateDataTypeHandler,
    DeleteDataTypeHandler,
    CreateRecordAnsweredHandler,
    CreateRecordHandler,
    UpdateRecordHandler,
    DeleteRecordHandler,
    UpsertRecordHandler,
    BulkRecordsHandler,
    CheckSignupDataHandler,
    UpsertSignupRecordsHandler,
    CreateRecordGrantHandler,
    RevokeRecordGrantHandler,
    ListDataTypesHandler,
    GetDataTypeHandler,
    ListRecordsHandler,
    GetRecordHandler,
    ListRecordGrantsHandler,
    GetRecordGrantHandler,
  ],
})
export class RecordsModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    data_types: true;
    data_records: true;
  }
}
