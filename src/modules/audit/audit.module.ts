import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { AuditLog1764000003000 } from './audit.migration';
import { AuditController } from './http/audit.controller';
import { EventLogProjection } from './projections/event-log.projection';
import { ListWorkspaceEventsHandler, ReadWorkspaceStreamHandler } from './queries/event-history.queries';

/** The auditors' event log (GET /w/{wid}/events): a raw-SQL read model, no entity. */
@Feature({ name: 'audit', migrations: [AuditLog1764000003000] })
@Module({
  controllers: [AuditController],
  providers: [EventLogProjection, ListWorkspaceEventsHandler, ReadWorkspaceStreamHandler],
})
export class AuditModule {}
