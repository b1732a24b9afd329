import type { Actor } from '../event-store/event-store.port';

/**
 * `assistant`: the chat assistant acting as its workflow's agent member. No bearer token
 * resolves to it (PrefixCredentialResolver refuses one that would), so no HTTP request can
 * present it; it is built in-process by assistantCredential, its scopes the member's role's.
 */
export type CredentialKind = 'api_key' | 'member_token' | 'oauth' | 'assistant';

/** What a bearer credential resolves to, before a workspace is considered. */
export interface Credential {
  kind: CredentialKind;
  credentialId: string;
  accountUuid: string;
  /** Scopes the credential itself carries (API keys, OAuth tokens). */
  scopes: readonly string[];
  /** Member tokens are bound to one member of one workspace. */
  workspaceId?: string;
  memberId?: number;
  /** The OAuth client (app) an access token was issued to. */
  clientId?: string;
  /** When the credential stops working by itself (epoch ms); a cache keeps it no longer. */
  expiresAt?: number;
}

/** The caller's place in the workspace a request names. */
export interface Membership {
  workspaceId: string;
  memberId: number;
  roleId: number | null;
  roleScopes: readonly string[];
  kind: 'person' | 'agent';
}

export interface Principal {
  credential: Credential;
  accountUuid: string;
  membership?: Membership;
  /** Credential scopes ∩ role scopes in the workspace asked for (empty outside one). */
  effectiveScopes: readonly string[];
  actor: Actor;
}

/** Resolves a bearer token; identity provides it (API keys, member tokens, OAuth later). */
export interface CredentialResolver {
  resolve(token: string): Promise<Credential | undefined>;
}

/** Finds the caller's active membership in a workspace; identity provides it. */
export interface MembershipResolver {
  find(workspaceId: string, credential: Credential): Promise<Membership | undefined>;
}

export const CREDENTIAL_RESOLVER = Symbol('CREDENTIAL_RESOLVER');
export const MEMBERSHIP_RESOLVER = Symbol('MEMBERSHIP_RESOLVER');

/**
 * The credential of the assistant acting as an agent member of one workspace, before its
 * membership is known: the membership resolver finds that member by id (an agent, active,
 * in this workspace only). Once found, `withRoleScopes` gives it the role's scopes and
 * nothing more, so its principal's effective scopes are exactly the member's.
 */
export function assistantCredential(workspaceId: string, memberId: number): Credential {
  return {
    kind: 'assistant',
    credentialId: `assistant:${workspaceId}:${memberId}`,
    accountUuid: '',
    scopes: [],
    workspaceId,
    memberId,
  };
}

/** The assistant's credential carrying its member's role scopes (see assistantCredential). */
export function withRoleScopes(credential: Credential, membership: Membership): Credential {
  return { ...credential, scopes: membership.roleScopes };
}
