export const apiKeyStream = (id: string): string => `apikey-${id}`;

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
