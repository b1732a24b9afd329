import { BUILT_IN_ROLES, BuiltInRole, BuiltInRoleKey } from '../../identity/domain/built-in-roles';

/**
 * Older spellings of the built-in roles that earlier versions and imports left behind
 * as custom roles (SPEC, Roles rule 5: "older spellings such as manager or admin").
 * Names are compared after `normalizeRoleName`, so "Platform_Support", "platform-support"
 * and "PLATFORM SUPPORT" are one spelling; the built-in name itself always counts.
 */
export const BUILT_IN_ROLE_ALIASES: Record<BuiltInRoleKey, readonly string[]> = {
  manager: [
    'managers',
    'admin',
    'admins',
    'administrator',
    'administrators',
    'workspace admin',
    'workspace manager',
  ],
  platform_support: ['support', 'platform support staff', 'support staff'],
  user: ['users', 'member', 'members', 'standard user', 'basic user'],
  agent: ['agents', 'ai agent', 'ai agents', 'bot', 'bots'],
  external: ['externals', 'external user', 'external users', 'guest', 'guests'],
};

/** Case, surrounding blanks, and `_`/`-`/repeated blanks between words do not distinguish names. */
export function normalizeRoleName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
}

/** The built-in role a custom role's name duplicates, if any. */
export function builtInDuplicatedBy(name: string): BuiltInRole | undefined {
  const n = normalizeRoleName(name);
  return BUILT_IN_ROLES.find(
    (r) => normalizeRoleName(r.name) === n || BUILT_IN_ROLE_ALIASES[r.key].includes(n),
  );
}

/** A custom role may not take a built-in role's exact name (that is how duplicates began). */
export function builtInNamed(name: string): BuiltInRole | undefined {
  const n = normalizeRoleName(name);
  return BUILT_IN_ROLES.find((r) => normalizeRoleName(r.name) === n);
}

export function builtInRole(key: BuiltInRoleKey): BuiltInRole {
  return BUILT_IN_ROLES.find((r) => r.key === key)!;
}

/** Roles that may only be held by agent members; every other built-in role is for people. */
export const isAgentRole = (key: BuiltInRoleKey): boolean => key === 'agent';
