import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type { ApiKeyCreated, ApiKeyRevoked } from './api-key.events';
import { assertKeyWithinIssuer, checkKeyScopes, KeyIssuer, newKeyExpiry } from './key-issuance.policy';

export { apiKeyStream } from './api-key.events';
export type { ApiKeyCreated, ApiKeyRevoked };

export const API_KEY_NAME_MAX = 100;
export const API_KEY_MIN_DAYS = 1;
export const API_KEY_MAX_DAYS = 365;
export const API_KEY_DEFAULT_DAYS = 90;
/**
 * API keys are account-level: their events carry no workspace. The envelope still needs
 * a workspaceId; this value says "none" (the audit log files such events under no workspace).
 */
export const NO_WORKSPACE = '';

export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked;

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      keyId: string;
      accountUuid: string;
      name: string;
      scopes: string[];
      /** Absent: the default lifetime, no later than the issuer's expiry. */
      expiresInDays: number | undefined;
      /** The key that asks (its own stream's facts): the new key cannot exceed it. */
      issuer: KeyIssuer;
      /** Public part of the secret and the SHA-256 of the whole secret; the secret itself never enters an event. */
      prefix: string;
      secretHash: string;
      now: string;
    }
  | { type: 'RevokeApiKey'; keyId: string; accountUuid: string; now: string };

export interface ApiKeyState {
  exists: boolean;
  accountUuid: string;
  revoked: boolean;
  scopes: readonly string[];
  expiresAt: string;
}

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, ApiKeyEvent> = {
  initialState: () => ({ exists: false, accountUuid: '', revoked: false, scopes: [], expiresAt: '' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyCreated':
        return {
          exists: true,
          accountUuid: event.data.accountUuid,
          revoked: false,
          scopes: event.data.scopes,
          expiresAt: event.data.expiresAt,
        };
      case 'ApiKeyRevoked':
        return { ...state, revoked: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateApiKey': {
        if (state.exists) throw new ConflictError('An API key with this id already exists');
        const name = command.name.trim();
        if (!name) throw new ValidationError('name: must not be empty');
        if (name.length > API_KEY_NAME_MAX)
          throw new ValidationError(`name: must be at most ${API_KEY_NAME_MAX} characters`);
        const days = command.expiresInDays;
        if (
          days !== undefined &&
          (!Number.isInteger(days) || days < API_KEY_MIN_DAYS || days > API_KEY_MAX_DAYS)
        ) {
          throw new ValidationError(
            `expiresInDays: must be an integer from ${API_KEY_MIN_DAYS} to ${API_KEY_MAX_DAYS}`,
          );
        }
        const scopes = checkKeyScopes(command.scopes);
        const expiresAt = newKeyExpiry(command.now, days, API_KEY_DEFAULT_DAYS, command.issuer);
        assertKeyWithinIssuer(command.issuer, scopes, expiresAt);
        return [
          {
            type: 'ApiKeyCreated',
            data: {
              keyId: command.keyId,
              accountUuid: command.accountUuid,
              name,
              prefix: command.prefix,
              secretHash: command.secretHash,
              scopes,
              createdAt: command.now,
              expiresAt,
            },
          },
        ];
      }
      case 'RevokeApiKey': {
        // Another account's key reads as absent, and a revoked key is gone.
        if (!state.exists || state.accountUuid !== command.accountUuid || state.revoked)
          throw new NotFoundError('API key not found');
        return [
          {
            type: 'ApiKeyRevoked',
            data: { keyId: command.keyId, accountUuid: command.accountUuid, revokedAt: command.now },
          },
        ];
      }
    }
  },
};
