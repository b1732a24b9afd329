/** Stream names and events of the oauth feature (no imports: safe to load first, see features spec). */
export const accountPasswordStream = (accountUuid: string): string => `account-password-${accountUuid}`;
export const oauthAppStream = (appId: string): string => `oauth-app-${appId}`;
export const oauthGrantStream = (grantId: string): string => `oauth-grant-${grantId}`;

export type ClientType = 'confidential' | 'public';

export interface AccountPasswordSet {
  type: 'AccountPasswordSet';
  /** The scrypt hash (with its salt and parameters); the password itself never enters an event. */
  data: { accountUuid: string; passwordHash: string; setAt: string };
}

export interface OAuthAppCreated {
  type: 'OAuthAppCreated';
  data: {
    appId: string;
    clientId: string;
    /** The owning account; null for a client that registered itself (RFC 7591). */
    accountUuid: string | null;
    name: string;
    redirectUris: string[];
    scopes: string[];
    mcpServerUrl: string | null;
    clientType: ClientType;
    /** SHA-256 of the client secret (confidential clients); the secret is shown once. */
    secretHash: string | null;
    registeredDynamically: boolean;
    createdAt: string;
  };
}

export interface OAuthAppUpdated {
  type: 'OAuthAppUpdated';
  data: { appId: string; name: string; redirectUris: string[]; scopes: string[]; updatedAt: string };
}

export interface OAuthAppSecretRotated {
  type: 'OAuthAppSecretRotated';
  data: { appId: string; secretHash: string; rotatedAt: string };
}

export interface OAuthAppDeleted {
  type: 'OAuthAppDeleted';
  /** Every grant and token of the app ends with it. */
  data: { appId: string; clientId: string; deletedAt: string };
}

export interface OAuthGrantApproved {
  type: 'OAuthGrantApproved';
  data: {
    grantId: string;
    appId: string;
    clientId: string;
    accountUuid: string;
    workspaceId: string;
    /** The OAuth scopes the person approved (spec names such as data:read, or namespace:level). */
    scopes: string[];
    approvedAt: string;
  };
}

/** `member_left`: the member the grant acts as left its workspace (identity's MemberArchived). */
export type GrantRevocationReason = 'revoked' | 'code_reused' | 'refresh_token_reused' | 'member_left';

export interface OAuthGrantRevoked {
  type: 'OAuthGrantRevoked';
  data: { grantId: string; appId: string; reason: GrantRevocationReason; revokedAt: string };
}

export type AccountPasswordEvent = AccountPasswordSet;
export type OAuthAppEvent = OAuthAppCreated | OAuthAppUpdated | OAuthAppSecretRotated | OAuthAppDeleted;
export type OAuthGrantEvent = OAuthGrantApproved | OAuthGrantRevoked;
