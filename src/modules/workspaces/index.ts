/**
 * The workspaces feature's public surface: what other features may use. Everything else
 * under modules/workspaces is internal (src/app.features.spec.ts enforces it).
 */
export { CreateWorkspaceCommand } from './commands/create-workspace.command';
export { UpdateWorkspaceCommand } from './commands/update-workspace.command';
export { checkWorkspaceName, WORKSPACE_NAME_MAX } from './domain/workspace';
export type { SmsQuietHours, WorkspaceEvent, WorkspaceSettings } from './domain/workspace';
export { secondsOfLocalTime } from './domain/workspace';
export {
  GetWorkspaceDefaultRoleQuery,
  GetWorkspaceNamesQuery,
  GetWorkspaceSettingsQuery,
} from './queries/workspace-facts.queries';
