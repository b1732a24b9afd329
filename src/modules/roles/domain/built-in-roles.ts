import { ALL_SCOPES } from '../../../core/auth/scopes';

export type BuiltInRoleKey = 'manager' | 'platform_support' | 'user' | 'agent' | 'external';

export interface BuiltInRole {
  key: BuiltInRoleKey;
  name: string;
  permissions: readonly string[];
}

/** The five built-in roles and exactly the scopes the spec grants them. */
export const BUILT_IN_ROLES: readonly BuiltInRole[] = [
  { key: 'manager', name: 'Manager', permissions: ALL_SCOPES },
  { key: 'platform_support', name: 'Platform Support', permissions: ALL_SCOPES },
  { key: 'user', name: 'User', permissions: ['agents:read', 'dm:read', 'dm:write', 'devices:write'] },
  { key: 'agent', name: 'Agent', permissions: [] },
  { key: 'external', name: 'External', permissions: [] },
];
