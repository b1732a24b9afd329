import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type { ClientType, OAuthAppEvent } from './oauth.events';
import { isOAuthScope, OAUTH_SCOPE_MAX, OAUTH_SCOPES_MAX_COUNT } from './oauth-scopes';
import { checkRedirectUris, redirectUriProblem } from './redirect-uri';

export const APP_NAME_MAX = 200;
/**
 * OAuth apps are account-level (or nobody's, when registered dynamically): their events
 * carry no workspace, as API keys' do.
 */
export const NO_WORKSPACE = '';

export type OAuthAppCommand =
  | {
      type: 'CreateOAuthApp';
      appId: string;
      clientId: string;
      accountUuid: string | null;
      name: string;
      redirectUris: string[];
      scopes: string[];
      mcpServerUrl: string | null;
      clientType: ClientType;
      /** SHA-256 of the new secret; null for public clients. */
      secretHash: string | null;
      registeredDynamically: boolean;
      now: string;
    }
  | {
      type: 'UpdateOAuthApp';
      accountUuid: string;
      name?: string;
      redirectUris?: string[];
      scopes?: string[];
      now: string;
    }
  | { type: 'RotateOAuthAppSecret'; accountUuid: string; secretHash: string; now: string }
  | { type: 'DeleteOAuthApp'; accountUuid: string; now: string };

export interface OAuthAppState {
  exists: boolean;
  deleted: boolean;
  appId: string;
  clientId: string;
  accountUuid: string | null;
  clientType: ClientType;
  name: string;
  redirectUris: string[];
  scopes: string[];
}

export function checkAppName(name: unknown): string {
  if (typeof name !== 'string') throw new ValidationError('name: must be a string');
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be empty');
  if (trimmed.length > APP_NAME_MAX)
    throw new ValidationError(`name: must be at most ${APP_NAME_MAX} characters`);
  return trimmed;
}

export function checkAppScopes(scopes: readonly string[], field = 'scopes'): string[] {
  if (!Array.isArray(scopes) || !scopes.length)
    throw new ValidationError(`${field}: must list at least one scope`);
  if (scopes.length > OAUTH_SCOPES_MAX_COUNT)
    throw new ValidationError(`${field}: must list at most ${OAUTH_SCOPES_MAX_COUNT} scopes`);
  scopes.forEach((s, i) => {
    if (typeof s !== 'string' || s.length > OAUTH_SCOPE_MAX || !isOAuthScope(s))
      throw new ValidationError(
        `${field}.${i}: unknown scope; use the OAuth scopes (workspace:read, data:write, task:read, ...) or <namespace>:<level>`,
      );
  });
  return [...new Set(scopes)];
}

function checkMcpServerUrl(url: string | null): string | null {
  if (url === null) return null;
  const problem = redirectUriProblem(url);
  if (problem) throw new ValidationError(`mcpServerUrl: ${problem}`);
  return url;
}

/** Another account's app reads as absent, and a deleted one is gone. */
function assertOwned(state: OAuthAppState, accountUuid: string): void {
  if (!state.exists || state.deleted || state.accountUuid !== accountUuid)
    throw new NotFoundError('App not found');
}

export const oauthAppDecider: Decider<OAuthAppState, OAuthAppCommand, OAuthAppEvent> = {
  initialState: () => ({
    exists: false,
    deleted: false,
    appId: '',
    clientId: '',
    accountUuid: null,
    clientType: 'confidential',
    name: '',
    redirectUris: [],
    scopes: [],
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthAppCreated':
        return {
          exists: true,
          deleted: false,
          appId: event.data.appId,
          clientId: event.data.clientId,
          accountUuid: event.data.accountUuid,
          clientType: event.data.clientType,
          name: event.data.name,
          redirectUris: event.data.redirectUris,
          scopes: event.data.scopes,
        };
      case 'OAuthAppUpdated':
        return {
          ...state,
          name: event.data.name,
          redirectUris: event.data.redirectUris,
          scopes: event.data.scopes,
        };
      case 'OAuthAppSecretRotated':
        return state;
      case 'OAuthAppDeleted':
        return { ...state, deleted: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateOAuthApp': {
        if (state.exists) throw new ConflictError('An app with this id already exists');
        if ((command.clientType === 'confidential') !== (command.secretHash !== null))
          throw new Error('A confidential client has a secret and a public one has none');
        return [
          {
            type: 'OAuthAppCreated',
            data: {
              appId: command.appId,
              clientId: command.clientId,
              accountUuid: command.accountUuid,
              name: checkAppName(command.name),
              redirectUris: checkRedirectUris(command.redirectUris),
              scopes: checkAppScopes(command.scopes),
              mcpServerUrl: checkMcpServerUrl(command.mcpServerUrl),
              clientType: command.clientType,
              secretHash: command.secretHash,
              registeredDynamically: command.registeredDynamically,
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateOAuthApp': {
        assertOwned(state, command.accountUuid);
        const next = {
          appId: state.appId,
          name: command.name === undefined ? state.name : checkAppName(command.name),
          redirectUris:
            command.redirectUris === undefined ? state.redirectUris : checkRedirectUris(command.redirectUris),
          scopes: command.scopes === undefined ? state.scopes : checkAppScopes(command.scopes),
        };
        const same =
          next.name === state.name &&
          next.redirectUris.join(' ') === state.redirectUris.join(' ') &&
          next.scopes.join(' ') === state.scopes.join(' ');
        return same ? [] : [{ type: 'OAuthAppUpdated', data: { ...next, updatedAt: command.now } }];
      }
      case 'RotateOAuthAppSecret':
        assertOwned(state, command.accountUuid);
        if (state.clientType !== 'confidential')
          throw new ValidationError('clientType: a public client has no secret to rotate');
        return [
          {
            type: 'OAuthAppSecretRotated',
            data: { appId: state.appId, secretHash: command.secretHash, rotatedAt: command.now },
          },
        ];
      case 'DeleteOAuthApp':
        assertOwned(state, command.accountUuid);
        return [
          {
            type: 'OAuthAppDeleted',
            data: { appId: state.appId, clientId: state.clientId, deletedAt: command.now },
          },
        ];
    }
  },
};
