import { Module } from '@nestjs/common';
import { RolesModule } from '../roles/roles.module';
import { UpdateWorkspaceHandler } from './commands/update-workspace.command';
import { WorkspacesController } from './http/workspaces.controller';
import { WorkspacesProjection } from './projections/workspaces.projection';
import { GetWorkspaceHandler, ListWorkspacesHandler } from './queries/workspace.queries';

@Module({
  imports: [RolesModule],
  controllers: [WorkspacesController],
  providers: [WorkspacesProjection, UpdateWorkspaceHandler, ListWorkspacesHandler, GetWorkspaceHandler],
})
export class WorkspacesModule {}
