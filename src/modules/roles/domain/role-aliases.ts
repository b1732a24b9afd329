import { BUILT_IN_ROLES, BuiltInRole, BuiltInRoleKey } from './built-in-roles';

/**
 * Custom role names are unique among custom roles up to case, surrounding blanks and
 * `_`/`-`/repeated blanks between words (the read-model lookup in
 * commands/custom-role-name.ts applies the same rule in SQL).
 */
export function normalizeRoleName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
}

/**
 * The built-in role whose name is exactly `name` (after trimming), if any: a custom role
 * may not take it. Other spellings ("manager", "admin", "Users") are allowed: they are
 * the duplicates SPEC Roles rule 5 lets operators merge into the built-in role.
 */
export function builtInNamed(name: string): BuiltInRole | undefined {
  const n = name.trim();
  return BUILT_IN_ROLES.find((r) => r.name === n);
}

export function builtInRole(key: BuiltInRoleKey): BuiltInRole {
  return BUILT_IN_ROLES.find((r) => r.key === key)!;
}

/** Roles that may only be held by agent members; every other built-in role is for people. */
export const isAgentRole = (key: BuiltInRoleKey): boolean => key === 'agent';
