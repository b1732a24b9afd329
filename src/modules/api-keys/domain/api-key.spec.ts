import { ForbiddenError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { ApiKeyCommand, ApiKeyEvent, apiKeyDecider } from './api-key';

const spec = deciderSpec(apiKeyDecider);
const account = '0190a6c4-0000-7000-8000-00000000000a';
const now = '2026-11-21T10:00:00.000Z';
/** The key that asks: broad, and living a year. */
const issuer = {
  scopes: ['records:admin', 'members:write', 'account:admin'],
  expiresAt: '2027-11-21T10:00:00.000Z',
};

const create = (over: Partial<Extract<ApiKeyCommand, { type: 'CreateApiKey' }>> = {}): ApiKeyCommand => ({
  type: 'CreateApiKey',
  keyId: 'k1',
  accountUuid: account,
  name: ' CRM sync ',
  scopes: ['records:write', 'members:read', 'records:write'],
  expiresInDays: 30,
  issuer,
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

  it('a key creates only keys within its own scopes (with implication) and lifetime', () => {
    spec
      .given([])
      .when(create({ scopes: ['records:read', 'members:read', 'account:admin'] }))
      .then([
        {
          ...created,
          data: { ...created.data, scopes: ['records:read', 'members:read', 'account:admin'] },
        },
      ]);
    spec
      .given([])
      .when(create({ scopes: ['members:read'], issuer: { ...issuer, scopes: ['members:read'] } }))
      .then([{ ...created, data: { ...created.data, scopes: ['members:read'] } }]);
    spec
      .given([])
      .when(create({ scopes: ['members:admin', 'records:write'] }))
      .thenThrows(
        ForbiddenError,
        /^scopes: this key lacks members:admin, so a key it creates cannot have it$/,
      );
    spec
      .given([])
      .when(create({ scopes: ['account:admin'], issuer: { ...issuer, scopes: ['members:write'] } }))
      .thenThrows(ForbiddenError, /^scopes: this key lacks account:admin/);
    const shortLived = { ...issuer, expiresAt: '2026-11-28T10:00:00.000Z' };
    spec
      .given([])
      .when(create({ expiresInDays: 8, issuer: shortLived }))
      .thenThrows(ForbiddenError, /^expiresInDays: this key expires at 2026-11-28T10:00:00.000Z/);
    spec
      .given([])
      .when(create({ expiresInDays: 7, issuer: shortLived }))
      .then([{ ...created, data: { ...created.data, expiresAt: shortLived.expiresAt } }]);
  });

  it("without expiresInDays: 90 days, cut to the issuer's expiry", () => {
    spec
      .given([])
      .when(create({ expiresInDays: undefined }))
      .then([{ ...created, data: { ...created.data, expiresAt: '2027-02-19T10:00:00.000Z' } }]);
    spec
      .given([])
      .when(
        create({ expiresInDays: undefined, issuer: { ...issuer, expiresAt: '2026-12-01T00:00:00.000Z' } }),
      )
      .then([{ ...created, data: { ...created.data, expiresAt: '2026-12-01T00:00:00.000Z' } }]);
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
