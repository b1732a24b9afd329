import { isAccountScope, isValidScope, SCOPE_LEVELS, SCOPE_NAMESPACES } from '../../../core/auth/scopes';
import { Decider } from '../../../core/cqrs/decider';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../core/http/domain-errors';
import type { BuiltInRoleKey } from './built-in-roles';
import type { MemberRoleCreated, MemberRolesMerged } from './member-role.events';
import {
  EMPTY_FILE_ACCESS,
  EMPTY_SITE_AUDIENCE,
  FileAccess,
  normalizeFileAccess,
  normalizeSiteAudience,
  SiteAudience,
} from './role-access';
import { builtInNamed, builtInRole, isAgentRole } from './role-aliases';

export { memberRoleStream } from './member-role.events';
export type { MemberRolesMerged };

export const ROLE_NAME_MAX = 100;

/** Bootstrap's MemberRoleCreated, plus the access a custom role may be created with. */
export interface MemberRoleCreatedEvent {
  type: 'MemberRoleCreated';
  data: MemberRoleCreated['data'] & { siteAudience?: SiteAudience; fileAccess?: FileAccess };
}

/** Only what changed; access fields are replaced whole when present. */
export interface MemberRoleUpdated {
  type: 'MemberRoleUpdated';
  data: {
    roleId: number;
    workspaceId: string;
    name?: string;
    permissions?: string[];
    siteAudience?: SiteAudience;
    fileAccess?: FileAccess;
    updatedAt: string;
  };
}

export interface MemberRoleDeleted {
  type: 'MemberRoleDeleted';
  data: { roleId: number; workspaceId: string; deletedAt: string };
}

export type MemberRoleEvent =
  MemberRoleCreatedEvent | MemberRoleUpdated | MemberRoleDeleted | MemberRolesMerged;

/** A holder of a role as the members read model shows it (archived members included). */
export interface RoleHolder {
  memberId: number;
  kind: 'person' | 'agent';
  hasAccount: boolean;
}

export interface MergeTarget {
  roleId: number;
  workspaceId: string;
  name: string;
  builtIn: BuiltInRoleKey | null;
}

export type MemberRoleCommand =
  | {
      type: 'CreateMemberRole';
      roleId: number;
      workspaceId: string;
      name: string;
      permissions: string[];
      siteAudience?: SiteAudience;
      fileAccess?: FileAccess;
      now: string;
    }
  | {
      type: 'UpdateMemberRole';
      roleId: number;
      workspaceId: string;
      name?: string;
      permissions?: string[];
      siteAudience?: SiteAudience;
      fileAccess?: FileAccess;
      now: string;
    }
  | {
      type: 'DeleteMemberRole';
      roleId: number;
      workspaceId: string;
      memberCount: number;
      invitationCount: number;
      isWorkspaceDefault: boolean;
      now: string;
    }
  | {
      type: 'MergeMemberRole';
      /** The duplicate (this stream). */
      roleId: number;
      workspaceId: string;
      target: MergeTarget | undefined;
      resourceAccess: 'copy' | 'discard';
      holders: RoleHolder[];
      invitationIds: string[];
      isWorkspaceDefault: boolean;
      now: string;
    };

export interface MemberRoleState {
  status: 'absent' | 'active' | 'deleted';
  roleId: number;
  workspaceId: string;
  name: string;
  permissions: string[];
  builtIn: BuiltInRoleKey | null;
  siteAudience: SiteAudience;
  fileAccess: FileAccess;
}

const initialState = (): MemberRoleState => ({
  status: 'absent',
  roleId: 0,
  workspaceId: '',
  name: '',
  permissions: [],
  builtIn: null,
  siteAudience: EMPTY_SITE_AUDIENCE,
  fileAccess: EMPTY_FILE_ACCESS,
});

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be empty');
  if (trimmed.length > ROLE_NAME_MAX)
    throw new ValidationError(`name: must be at most ${ROLE_NAME_MAX} characters`);
  return trimmed;
}

/** Every scope must be `<namespace>:<level>` from the spec's lists; the caller's order, repeats dropped. */
export function checkPermissions(permissions: readonly string[], field = 'permissions'): string[] {
  // Account scopes act on a credential's own account, outside any workspace: a role cannot carry them.
  const account = permissions.find(isAccountScope);
  if (account) {
    throw new ValidationError(
      `${field}: ${account} is an account scope that only API keys and OAuth grants carry; a role cannot hold it`,
    );
  }
  const unknown = permissions.filter((p) => !isValidScope(p));
  if (unknown.length) {
    throw new ValidationError(
      `${field}: unknown scope ${unknown.map((u) => `"${u}"`).join(', ')}; a scope is <namespace>:<${SCOPE_LEVELS.join('|')}>` +
        ` with namespace one of ${SCOPE_NAMESPACES.join(', ')}`,
    );
  }
  return [...new Set(permissions)];
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Only a built-in role's exact name is reserved here; other spellings are allowed (Roles
 * rule 5). Names of custom roles are unique through their claim (role-name-claim.ts).
 */
function checkNotBuiltInName(name: string): void {
  const builtIn = builtInNamed(name);
  if (builtIn)
    throw new ConflictError(`name: "${builtIn.name}" is the name of a built-in role; choose another name`);
}

function requireRole(state: MemberRoleState, workspaceId: string): void {
  // Another workspace's role reads as absent: ids must not let a caller probe other tenants.
  if (state.status !== 'active' || state.workspaceId !== workspaceId)
    throw new NotFoundError('Role not found');
}

function decideMerge(
  command: Extract<MemberRoleCommand, { type: 'MergeMemberRole' }>,
  state: MemberRoleState,
): MemberRoleEvent[] {
  requireRole(state, command.workspaceId);
  if (state.builtIn) {
    throw new ValidationError(
      `roleId: ${state.name} is a built-in role and cannot be merged away; merge its duplicates into it instead`,
    );
  }
  const target = command.target;
  if (!target || target.workspaceId !== command.workspaceId) {
    throw new ValidationError('targetRoleId: no role with this id in this workspace');
  }
  if (!target.builtIn)
    throw new ValidationError(
      `targetRoleId: must be a built-in role; role ${target.roleId} is a custom role`,
    );
  if (target.builtIn === 'platform_support') {
    throw new ForbiddenError(
      'targetRoleId: Platform Support is assigned by support staff only; workspace operators cannot give it',
    );
  }
  // Any custom role may be merged into a built-in one: which custom roles duplicate which
  // built-in role is the operator's call. Rule 6 lists the only refusals.
  const targetName = builtInRole(target.builtIn).name;

  const people = command.holders.filter((h) => h.kind === 'person');
  const agents = command.holders.filter((h) => h.kind === 'agent');
  if (isAgentRole(target.builtIn) && (people.length || command.invitationIds.length)) {
    const parts = [
      people.length ? `${people.length} human member(s) (archived included)` : '',
      command.invitationIds.length ? `${command.invitationIds.length} unclaimed invitation(s)` : '',
    ].filter(Boolean);
    throw new ValidationError(
      `Merge refused: it would give the Agent role to a person (${parts.join(' and ')} of "${state.name}")`,
    );
  }
  if (!isAgentRole(target.builtIn) && agents.length) {
    throw new ValidationError(
      `Merge refused: it would give a human role to an agent member (${agents.length} agent member(s) of "${state.name}" onto ${targetName})`,
    );
  }
  if (target.builtIn === 'manager' || target.builtIn === 'user') {
    const withoutAccount = people.filter((h) => !h.hasAccount);
    if (withoutAccount.length) {
      throw new ValidationError(
        `Merge refused: onto ${targetName} every human member of "${state.name}" (archived included) must have an Account;` +
          ` ${withoutAccount.length} (member id ${withoutAccount.map((h) => h.memberId).join(', ')}) have none`,
      );
    }
  }
  return [
    {
      type: 'MemberRolesMerged',
      data: {
        workspaceId: command.workspaceId,
        sourceRoleId: state.roleId,
        targetRoleId: target.roleId,
        resourceAccess: command.resourceAccess,
        memberIds: command.holders.map((h) => h.memberId).sort((a, b) => a - b),
        invitationIds: [...command.invitationIds].sort(),
        workspaceDefaultMoved: command.isWorkspaceDefault,
        mergedAt: command.now,
      },
    },
  ];
}

export const memberRoleDecider: Decider<MemberRoleState, MemberRoleCommand, MemberRoleEvent> = {
  initialState,

  evolve(state, event) {
    switch (event.type) {
      case 'MemberRoleCreated': {
        const d = event.data;
        return {
          status: 'active',
          roleId: d.roleId,
          workspaceId: d.workspaceId,
          name: d.name,
          permissions: d.permissions,
          builtIn: d.builtIn,
          siteAudience: d.siteAudience ?? EMPTY_SITE_AUDIENCE,
          fileAccess: d.fileAccess ?? EMPTY_FILE_ACCESS,
        };
      }
      case 'MemberRoleUpdated': {
        const d = event.data;
        return {
          ...state,
          name: d.name ?? state.name,
          permissions: d.permissions ?? state.permissions,
          siteAudience: d.siteAudience ?? state.siteAudience,
          fileAccess: d.fileAccess ?? state.fileAccess,
        };
      }
      case 'MemberRoleDeleted':
        return { ...state, status: 'deleted' };
      case 'MemberRolesMerged':
        // Appended to the duplicate's stream: the duplicate is gone.
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateMemberRole': {
        if (state.status !== 'absent')
          throw new ConflictError(`A role with id ${command.roleId} already exists`);
        const name = checkName(command.name);
        checkNotBuiltInName(name);
        const permissions = checkPermissions(command.permissions);
        return [
          {
            type: 'MemberRoleCreated',
            data: {
              roleId: command.roleId,
              workspaceId: command.workspaceId,
              name,
              permissions,
              builtIn: null,
              siteAudience: normalizeSiteAudience(command.siteAudience ?? EMPTY_SITE_AUDIENCE),
              fileAccess: normalizeFileAccess(command.fileAccess ?? EMPTY_FILE_ACCESS),
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateMemberRole': {
        requireRole(state, command.workspaceId);
        let name: string | undefined;
        let permissions: string[] | undefined;
        if (command.name !== undefined) {
          const n = checkName(command.name);
          if (n !== state.name) {
            if (state.builtIn)
              throw new ValidationError(`name: the built-in role ${state.name} cannot be renamed`);
            checkNotBuiltInName(n);
            name = n;
          }
        }
        if (command.permissions !== undefined) {
          const p = checkPermissions(command.permissions);
          if (state.builtIn) {
            // A built-in role sent back in any order is unchanged.
            if (!sameSet(p, state.permissions))
              throw new ValidationError(
                `permissions: the scopes of the built-in role ${state.name} cannot be changed`,
              );
          } else if (!sameList(p, state.permissions)) {
            // The caller's order is kept, so a reordering is a change.
            permissions = p;
          }
        }
        // Access is written whenever given: a merge into this role changes its access from
        // the duplicate's stream, so this stream's state is not the last word on it.
        const siteAudience = command.siteAudience && normalizeSiteAudience(command.siteAudience);
        const fileAccess = command.fileAccess && normalizeFileAccess(command.fileAccess);
        if (name === undefined && permissions === undefined && !siteAudience && !fileAccess) return [];
        return [
          {
            type: 'MemberRoleUpdated',
            data: {
              roleId: state.roleId,
              workspaceId: state.workspaceId,
              ...(name !== undefined ? { name } : {}),
              ...(permissions !== undefined ? { permissions } : {}),
              ...(siteAudience ? { siteAudience } : {}),
              ...(fileAccess ? { fileAccess } : {}),
              updatedAt: command.now,
            },
          },
        ];
      }
      case 'DeleteMemberRole': {
        requireRole(state, command.workspaceId);
        if (state.builtIn)
          throw new ValidationError(`roleId: the built-in role ${state.name} cannot be deleted`);
        if (command.memberCount > 0) {
          throw new ConflictError(
            `Role ${state.roleId} is held by ${command.memberCount} member(s) (archived included); move them to another role or merge the role first`,
          );
        }
        if (command.invitationCount > 0) {
          throw new ConflictError(
            `Role ${state.roleId} is offered by ${command.invitationCount} unclaimed invitation(s); revoke or change them first`,
          );
        }
        if (command.isWorkspaceDefault) {
          throw new ConflictError(
            `Role ${state.roleId} is the workspace's default role for new members; make another role the default first`,
          );
        }
        return [
          {
            type: 'MemberRoleDeleted',
            data: { roleId: state.roleId, workspaceId: state.workspaceId, deletedAt: command.now },
          },
        ];
      }
      case 'MergeMemberRole':
        return decideMerge(command, state);
    }
  },
};
