import { Module } from '@nestjs/common';
import { AuditController } from './http/audit.controller';
import { EventLogProjection } from './projections/event-log.projection';
import { ListWorkspaceEventsHandler, ReadWorkspaceStreamHandler } from './queries/event-history.queries';

@Module({
  controllers: [AuditController],
  providers: [EventLogProjection, ListWorkspaceEventsHandler, ReadWorkspaceStreamHandler],
})
export class AuditModule {}
