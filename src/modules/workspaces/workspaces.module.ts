import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { CreateWorkspaceHandler } from './commands/create-workspace.command';
import { UpdateWorkspaceHandler } from './commands/update-workspace.command';
import { WorkspacesController } from './http/workspaces.controller';
import { WorkspaceEntity } from './projections/workspace.entity';
import { WorkspacesProjection } from './projections/workspaces.projection';
import {
  GetWorkspaceDefaultRoleHandler,
  GetWorkspaceNamesHandler,
  GetWorkspaceSettingsHandler,
} from './queries/workspace-facts.queries';
import { GetWorkspaceHandler, ListWorkspacesHandler } from './queries/workspace.queries';
import { Workspaces1764000001000 } from './workspaces.migration';

@Feature({
  name: 'workspaces',
  entities: [WorkspaceEntity],
  migrations: [Workspaces1764000001000],
  versionedResources: ['workspaces'],
})
@Module({
  controllers: [WorkspacesController],
  providers: [
    WorkspacesProjection,
    CreateWorkspaceHandler,
    UpdateWorkspaceHandler,
    ListWorkspacesHandler,
    GetWorkspaceHandler,
    GetWorkspaceDefaultRoleHandler,
    GetWorkspaceNamesHandler,
    GetWorkspaceSettingsHandler,
  ],
})
export class WorkspacesModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    workspaces: true;
  }
}
