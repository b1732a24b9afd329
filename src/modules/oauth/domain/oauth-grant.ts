import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, ValidationError } from '../../../core/http/domain-errors';
import type { GrantRevocationReason, OAuthGrantEvent } from './oauth.events';

/**
 * One person's consent for one app in one workspace: every token of an authorization
 * code and its refresh chain belongs to it, and revoking it ends them all (a reused code
 * or refresh token, RFC 9700 §4.14.2 and RFC 6749 §10.5).
 */
export type OAuthGrantCommand =
  | {
      type: 'ApproveOAuthGrant';
      grantId: string;
      appId: string;
      clientId: string;
      accountUuid: string;
      workspaceId: string;
      /** What the app asked for, and what it is registered for. */
      requestedScopes: string[];
      appScopes: string[];
      now: string;
    }
  | { type: 'RevokeOAuthGrant'; reason: GrantRevocationReason; now: string };

export interface OAuthGrantState {
  exists: boolean;
  revoked: boolean;
  grantId: string;
  appId: string;
  workspaceId: string;
}

export const oauthGrantDecider: Decider<OAuthGrantState, OAuthGrantCommand, OAuthGrantEvent> = {
  initialState: () => ({ exists: false, revoked: false, grantId: '', appId: '', workspaceId: '' }),

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthGrantApproved':
        return {
          exists: true,
          revoked: false,
          grantId: event.data.grantId,
          appId: event.data.appId,
          workspaceId: event.data.workspaceId,
        };
      case 'OAuthGrantRevoked':
        return { ...state, revoked: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'ApproveOAuthGrant': {
        if (state.exists) throw new ConflictError('This grant already exists');
        const outside = command.requestedScopes.filter((s) => !command.appScopes.includes(s));
        if (outside.length)
          throw new ValidationError(`scope: the app is not registered for ${outside.join(', ')}`);
        if (!command.requestedScopes.length) throw new ValidationError('scope: must name at least one scope');
        return [
          {
            type: 'OAuthGrantApproved',
            data: {
              grantId: command.grantId,
              appId: command.appId,
              clientId: command.clientId,
              accountUuid: command.accountUuid,
              workspaceId: command.workspaceId,
              scopes: command.requestedScopes,
              approvedAt: command.now,
            },
          },
        ];
      }
      case 'RevokeOAuthGrant':
        // Revoking twice (a replayed code after a revocation) changes nothing.
        if (!state.exists || state.revoked) return [];
        return [
          {
            type: 'OAuthGrantRevoked',
            data: {
              grantId: state.grantId,
              appId: state.appId,
              reason: command.reason,
              revokedAt: command.now,
            },
          },
        ];
    }
  },
};
