import type { BuiltInRoleKey } from '../domain/built-in-roles';

// The public queries of roles (messages only, exported by roles/index.ts); their handlers
// are in role-facts.handlers.ts, so importing a message never loads roles' internals.

/**
 * The id of a built-in role of a workspace (undefined: none). Built-in roles are created
 * with the workspace and never change id nor get deleted, so the read model is a safe
 * lookup table even on a command path.
 */
export class GetBuiltInRoleIdQuery {
  constructor(
    readonly workspaceId: string,
    readonly key: BuiltInRoleKey,
  ) {}
}

/**
 * The scopes a role of a workspace grants (none for a role that is gone or of another
 * workspace): what a membership holding it may do, for identity's membership resolver.
 */
export class GetRoleScopesQuery {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
  ) {}
}

/** Role names by id (a deleted role is absent), for features that show what a member holds. */
export class GetRoleNamesQuery {
  constructor(readonly roleIds: readonly number[]) {}
}

/**
 * The role id to store as a workspace's default for a requested one, refusing a role that
 * may not be the default or that grants more than the caller holds (DefaultRoleCheck).
 * null asks for the built-in User role and resolves to its id.
 */
export class ResolveDefaultMemberRoleQuery {
  constructor(
    readonly workspaceId: string,
    readonly requested: number | null,
    /** The field the detail of a refusal names. */
    readonly field: string,
    /** The caller's effective scopes in the workspace. */
    readonly granter: readonly string[],
  ) {}
}
