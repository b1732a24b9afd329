import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { ApiKeyCommand, ApiKeyEvent, apiKeyDecider } from './api-key';

const spec = deciderSpec(apiKeyDecider);
const account = '0190a6c4-0000-7000-8000-00000000000a';
const now = '2026-11-21T10:00:00.000Z';

const create = (over: Partial<Extract<ApiKeyCommand, { type: 'CreateApiKey' }>> = {}): ApiKeyCommand => ({
  type: 'CreateApiKey',
  keyId: 'k1',
  accountUuid: account,
  name: ' CRM sync ',
  scopes: ['records:write', 'members:read', 'records:write'],
  expiresInDays: 30,
  prefix: 'abcdef012345',
  secretHash: 'h',
  now,
  ...over,
});

const created: ApiKeyEvent = {
  type: 'ApiKeyCreated',
  data: {
    keyId: 'k1',
    accountUuid: account,
    name: 'CRM sync',
    prefix: 'abcdef012345',
    secretHash: 'h',
    scopes: ['records:write', 'members:read'],
    createdAt: now,
    expiresAt: '2026-12-21T10:00:00.000Z',
  },
};

describe('API key decider', () => {
  it("creates a key that expires after the given days, storing only the hash and the caller's scope order without repeats", () => {
    spec.given([]).when(create()).then([created]);
  });

  it('accepts 1 to 365 days, nothing else', () => {
    spec
      .given([])
      .when(create({ expiresInDays: 1 }))
      .then([{ ...created, data: { ...created.data, expiresAt: '2026-11-22T10:00:00.000Z' } }]);
    for (const days of [0, 366, 1.5])
      spec
        .given([])
        .when(create({ expiresInDays: days }))
        .thenThrows(ValidationError, /^expiresInDays:/);
  });

  it('refuses unknown scopes and empty names, naming the field', () => {
    spec
      .given([])
      .when(create({ scopes: ['records:write', 'everything'] }))
      .thenThrows(ValidationError, /^scopes: unknown scope "everything"/);
    spec
      .given([])
      .when(create({ name: '   ' }))
      .thenThrows(ValidationError, /^name:/);
  });

  it('revokes once, and only for its own account', () => {
    const revoke: ApiKeyCommand = { type: 'RevokeApiKey', keyId: 'k1', accountUuid: account, now };
    spec
      .given([created])
      .when(revoke)
      .then([{ type: 'ApiKeyRevoked', data: { keyId: 'k1', accountUuid: account, revokedAt: now } }]);
    spec
      .given([
        created,
        { type: 'ApiKeyRevoked', data: { keyId: 'k1', accountUuid: account, revokedAt: now } },
      ])
      .when(revoke)
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when({ ...revoke, accountUuid: '0190a6c4-0000-7000-8000-00000000000b' })
      .thenThrows(NotFoundError);
    spec.given([]).when(revoke).thenThrows(NotFoundError);
  });
});
