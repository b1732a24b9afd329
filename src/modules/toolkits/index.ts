/**
 * The toolkits feature's public surface: what other features (agents, the MCP endpoint)
 * may use. Everything else under modules/toolkits is internal (src/app.features.spec.ts
 * enforces it).
 */
export { customToolkitStream, CUSTOM_TOOLKIT_EVENT_TYPES } from './domain/toolkit.events';
export type {
  CustomToolChanges,
  CustomToolFields,
  CustomToolkitChanges,
  CustomToolkitEvent,
  JsonSchemaObject,
} from './domain/toolkit.events';
export {
  ListEnabledCustomToolsQuery,
  ValidateCustomToolArgumentsQuery,
} from './queries/validate-tool-arguments.query';
export type { EnabledCustomTool, ValidatedToolCall } from './queries/validate-tool-arguments.query';
export { ToolArgumentValidators, validateToolArguments } from './domain/tool-arguments';
export type { ToolSchemaRef } from './domain/tool-arguments';
