import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { OAuthAppCommand, oauthAppDecider } from './oauth-app';
import type { OAuthAppCreated, OAuthAppEvent } from './oauth.events';

const spec = deciderSpec(oauthAppDecider);
const account = '0190a6c4-0000-7000-8000-00000000000a';
const now = '2026-11-23T10:00:00.000Z';

const create = (
  over: Partial<Extract<OAuthAppCommand, { type: 'CreateOAuthApp' }>> = {},
): OAuthAppCommand => ({
  type: 'CreateOAuthApp',
  appId: 'a1',
  clientId: 'app_1',
  accountUuid: account,
  name: ' Assistant ',
  redirectUris: ['https://x.example.com/cb', 'https://x.example.com/cb', 'http://127.0.0.1/cb'],
  scopes: ['data:read', 'task:write', 'data:read'],
  mcpServerUrl: null,
  clientType: 'confidential',
  secretHash: 'h',
  registeredDynamically: false,
  now,
  ...over,
});

const created: OAuthAppCreated = {
  type: 'OAuthAppCreated',
  data: {
    appId: 'a1',
    clientId: 'app_1',
    accountUuid: account,
    name: 'Assistant',
    redirectUris: ['https://x.example.com/cb', 'http://127.0.0.1/cb'],
    scopes: ['data:read', 'task:write'],
    mcpServerUrl: null,
    clientType: 'confidential',
    secretHash: 'h',
    registeredDynamically: false,
    createdAt: now,
  },
};
const deleted: OAuthAppEvent = {
  type: 'OAuthAppDeleted',
  data: { appId: 'a1', clientId: 'app_1', deletedAt: now },
};

describe('OAuth app decider', () => {
  it('creates an app with its name trimmed and its URIs and scopes deduplicated', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('refuses a second creation, bad URIs, unknown scopes and blank names', () => {
    spec.given([created]).when(create()).thenThrows(ConflictError);
    spec
      .given([])
      .when(create({ redirectUris: ['http://x.example.com/cb'] }))
      .thenThrows(ValidationError, /^redirectUris\.0: http/);
    spec
      .given([])
      .when(create({ scopes: ['account:admin'] }))
      .thenThrows(ValidationError, /^scopes\.0: unknown scope/);
    spec
      .given([])
      .when(create({ scopes: [] }))
      .thenThrows(ValidationError, /^scopes: must list/);
    spec
      .given([])
      .when(create({ name: '  ' }))
      .thenThrows(ValidationError, /^name: must not be empty/);
    spec
      .given([])
      .when(create({ mcpServerUrl: 'ftp://x' }))
      .thenThrows(ValidationError, /^mcpServerUrl/);
  });

  it('updates only what changed, and nothing when nothing did', () => {
    spec
      .given([created])
      .when({ type: 'UpdateOAuthApp', accountUuid: account, name: 'New', now })
      .then([
        {
          type: 'OAuthAppUpdated',
          data: {
            appId: 'a1',
            name: 'New',
            redirectUris: created.data.redirectUris,
            scopes: created.data.scopes,
            updatedAt: now,
          },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateOAuthApp', accountUuid: account, name: 'Assistant', now })
      .then([]);
  });

  it("treats another account's app and a deleted app as absent", () => {
    const other = '0190a6c4-0000-7000-8000-00000000000b';
    spec.given([created]).when({ type: 'DeleteOAuthApp', accountUuid: other, now }).thenThrows(NotFoundError);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteOAuthApp', accountUuid: account, now })
      .thenThrows(NotFoundError);
    spec
      .given([created, deleted])
      .when({ type: 'RotateOAuthAppSecret', accountUuid: account, secretHash: 'h2', now })
      .thenThrows(NotFoundError);
    spec.given([created]).when({ type: 'DeleteOAuthApp', accountUuid: account, now }).then([deleted]);
  });

  it('rotates the secret of confidential clients only', () => {
    spec
      .given([created])
      .when({ type: 'RotateOAuthAppSecret', accountUuid: account, secretHash: 'h2', now })
      .then([{ type: 'OAuthAppSecretRotated', data: { appId: 'a1', secretHash: 'h2', rotatedAt: now } }]);
    const pub: OAuthAppCreated = {
      ...created,
      data: { ...created.data, clientType: 'public', secretHash: null },
    };
    spec
      .given([pub])
      .when({ type: 'RotateOAuthAppSecret', accountUuid: account, secretHash: 'h2', now })
      .thenThrows(ValidationError, /public client/);
  });
});
