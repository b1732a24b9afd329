import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { RolesModule } from '../roles/roles.module';
import { UpdateWorkspaceHandler } from './commands/update-workspace.command';
import { WorkspacesController } from './http/workspaces.controller';
import { WorkspaceEntity } from './projections/workspace.entity';
import { WorkspacesProjection } from './projections/workspaces.projection';
import { GetWorkspaceHandler, ListWorkspacesHandler } from './queries/workspace.queries';
import { Workspaces1764000001000 } from './workspaces.migration';

@Feature({
  name: 'workspaces',
  entities: [WorkspaceEntity],
  migrations: [Workspaces1764000001000],
  versionedResources: ['workspaces'],
})
@Module({
  imports: [RolesModule],
  controllers: [WorkspacesController],
  providers: [WorkspacesProjection, UpdateWorkspaceHandler, ListWorkspacesHandler, GetWorkspaceHandler],
})
export class WorkspacesModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    workspaces: true;
  }
}
