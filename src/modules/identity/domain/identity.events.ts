import type { BuiltInRoleKey } from './built-in-roles';

export type MemberKind = 'person' | 'agent';

export interface AccountRegistered {
  type: 'AccountRegistered';
  data: {
    accountUuid: string;
    email: string | null;
    phone: string | null;
    name: string | null;
    createdAt: string;
  };
}

export interface MemberCreated {
  type: 'MemberCreated';
  data: {
    memberId: number;
    workspaceId: string;
    /** null: a contact without a login identity yet (imported); signup links one later. */
    accountUuid: string | null;
    email: string | null;
    phone: string | null;
    name: string | null;
    externalId: string | null;
    memberRoleId: number;
    kind: MemberKind;
    notifySms: boolean;
    notifyEmail: boolean;
    notifyVoice: boolean;
    createdAt: string;
  };
}

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

export interface ApiKeyCreated {
  type: 'ApiKeyCreated';
  data: {
    keyId: string;
    accountUuid: string;
    name: string;
    prefix: string;
    /** SHA-256 of the secret, hex; the secret itself is never stored or logged. */
    secretHash: string;
    scopes: string[];
    createdAt: string;
    expiresAt: string;
  };
}

export interface ApiKeyRevoked {
  type: 'ApiKeyRevoked';
  data: { keyId: string; accountUuid: string; revokedAt: string };
}

export const accountStream = (uuid: string): string => `account-${uuid}`;
export const memberStream = (id: number): string => `member-${id}`;
export const memberRoleStream = (id: number): string => `memberrole-${id}`;
export const apiKeyStream = (id: string): string => `apikey-${id}`;

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
