import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import {
  CreateCustomToolHandler,
  DeleteCustomToolHandler,
  UpdateCustomToolHandler,
} from './commands/tool.commands';
import {
  CreateCustomToolkitHandler,
  DeleteCustomToolkitHandler,
  SetCustomToolkitEnabledHandler,
  UpdateCustomToolkitHandler,
} from './commands/toolkit.commands';
import { CustomToolkitsController } from './http/custom-toolkits.controller';
import { CustomToolsController } from './http/custom-tools.controller';
import { CustomToolEntity, CustomToolkitEntity } from './projections/toolkit.entities';
import { CustomToolkitsProjection } from './projections/toolkits.projection';
import {
  GetCustomToolHandler,
  GetCustomToolkitHandler,
  ListCustomToolkitsHandler,
  ListCustomToolsHandler,
  ListEnabledCustomToolsHandler,
  ValidateCustomToolArgumentsHandler,
} from './queries/toolkit.queries';
import { CustomToolkitsTables1764000007800 } from './toolkits.migration';

/**
 * Toolkits: a workspace's custom toolkits and their tools (name, prompt, chat model and the
 * JSON Schema of their arguments), which agents and the MCP endpoint offer and call; and
 * the check of a tool call's arguments against that schema.
 */
@Feature({
  name: 'toolkits',
  entities: [CustomToolkitEntity, CustomToolEntity],
  migrations: [CustomToolkitsTables1764000007800],
  versionedResources: ['custom_toolkits', 'custom_tools'],
})
@Module({
  controllers: [CustomToolkitsController, CustomToolsController],
  providers: [
    CustomToolkitsProjection,
    CreateCustomToolkitHandler,
    UpdateCustomToolkitHandler,
    SetCustomToolkitEnabledHandler,
    DeleteCustomToolkitHandler,
    CreateCustomToolHandler,
    UpdateCustomToolHandler,
    DeleteCustomToolHandler,
    ListCustomToolkitsHandler,
    GetCustomToolkitHandler,
    ListCustomToolsHandler,
    GetCustomToolHandler,
    ValidateCustomToolArgumentsHandler,
    ListEnabledCustomToolsHandler,
  ],
})
export class ToolkitsModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    custom_toolkits: true;
    custom_tools: true;
  }
}
