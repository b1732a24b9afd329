import { ConflictError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { accountPasswordDecider, PasswordMismatchError } from './account-password';
import { OAuthGrantCommand, oauthGrantDecider } from './oauth-grant';
import type { OAuthGrantEvent } from './oauth.events';

const now = '2026-11-23T10:00:00.000Z';
const approve: OAuthGrantCommand = {
  type: 'ApproveOAuthGrant',
  grantId: 'g1',
  appId: 'a1',
  clientId: 'app_1',
  accountUuid: 'acc',
  workspaceId: 'w1',
  requestedScopes: ['data:read'],
  appScopes: ['data:read', 'task:read'],
  now,
};
const approved: OAuthGrantEvent = {
  type: 'OAuthGrantApproved',
  data: {
    grantId: 'g1',
    appId: 'a1',
    clientId: 'app_1',
    accountUuid: 'acc',
    workspaceId: 'w1',
    scopes: ['data:read'],
    approvedAt: now,
  },
};
const revoked: OAuthGrantEvent = {
  type: 'OAuthGrantRevoked',
  data: { grantId: 'g1', appId: 'a1', reason: 'code_reused', revokedAt: now },
};

describe('OAuth grant decider', () => {
  const spec = deciderSpec(oauthGrantDecider);

  it('approves only scopes the app is registered for', () => {
    spec.given([]).when(approve).then([approved]);
    spec
      .given([])
      .when({ ...approve, requestedScopes: ['data:write'] })
      .thenThrows(ValidationError, /not registered for data:write/);
    spec.given([approved]).when(approve).thenThrows(ConflictError);
  });

  it('revokes once; a second revocation (a code replayed again) changes nothing', () => {
    spec.given([approved]).when({ type: 'RevokeOAuthGrant', reason: 'code_reused', now }).then([revoked]);
    spec.given([approved, revoked]).when({ type: 'RevokeOAuthGrant', reason: 'revoked', now }).then([]);
    spec.given([]).when({ type: 'RevokeOAuthGrant', reason: 'revoked', now }).then([]);
  });
});

describe('account password decider', () => {
  const spec = deciderSpec(accountPasswordDecider);
  const set = (verified: boolean) =>
    ({
      type: 'SetAccountPassword',
      accountUuid: 'acc',
      passwordHash: 'h2',
      currentPasswordVerified: verified,
      now,
    }) as const;
  const first = {
    type: 'AccountPasswordSet',
    data: { accountUuid: 'acc', passwordHash: 'h1', setAt: now },
  } as const;

  it('sets a first password without a current one, and changes it only with the current one proven', () => {
    spec
      .given([])
      .when(set(false))
      .then([{ type: 'AccountPasswordSet', data: { accountUuid: 'acc', passwordHash: 'h2', setAt: now } }]);
    spec
      .given([first])
      .when(set(false))
      .thenThrows(PasswordMismatchError, /^currentPassword/);
    spec
      .given([first])
      .when(set(true))
      .then([{ type: 'AccountPasswordSet', data: { accountUuid: 'acc', passwordHash: 'h2', setAt: now } }]);
  });
});
