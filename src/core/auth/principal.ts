import type { Actor } from '../event-store/event-store.port';

export type CredentialKind = 'api_key' | 'member_token' | 'oauth';

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
