import type { BuiltInRoleKey } from './built-in-roles';

export const memberRoleStream = (id: number): string => `memberrole-${id}`;

/** A role of a workspace: the five built-in ones with the workspace, custom ones later. */
export interface MemberRoleCreated {
  type: 'MemberRoleCreated';
  data: {
    roleId: number;
    workspaceId: string;
    name: string;
    permissions: string[];
    builtIn: BuiltInRoleKey | null;
    createdAt: string;
  };
}

/**
 * One decision that moves everything from a duplicate role onto its built-in target
 * and deletes the duplicate (appended to the duplicate role's stream). Projections of
 * members, invitations and workspace settings apply it to their own rows.
 */
export interface MemberRolesMerged {
  type: 'MemberRolesMerged';
  data: {
    workspaceId: string;
    sourceRoleId: number;
    targetRoleId: number;
    resourceAccess: 'copy' | 'discard';
    memberIds: number[];
    invitationIds: string[];
    workspaceDefaultMoved: boolean;
    mergedAt: string;
  };
}
