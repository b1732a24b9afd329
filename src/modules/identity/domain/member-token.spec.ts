import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import {
  memberTokenDecider,
  memberTokenMatches,
  memberTokenPrefixOf,
  newMemberTokenSecret,
} from './member-token';
import type { MemberTokenEvent } from './member.events';

const spec = deciderSpec(memberTokenDecider);
const wid = '0190a6c4-0000-7000-8000-000000000001';
const acc = '0190a6c4-0000-7000-8000-0000000000aa';
const tokenId = '0190a6c4-0000-7000-8000-0000000000ff';
const t0 = '2026-11-21T10:00:00.000Z';
const issued: MemberTokenEvent = {
  type: 'MemberTokenIssued',
  data: {
    tokenId,
    workspaceId: wid,
    memberId: 7,
    accountUuid: acc,
    prefix: 'abc',
    secretHash: 'h',
    issuedAt: t0,
    expiresAt: '2026-12-21T10:00:00.000Z',
  },
};

describe('member tokens', () => {
  it('are wsm_ tokens found by prefix and checked by hash', () => {
    const { prefix, token, hash } = newMemberTokenSecret();
    expect(token).toMatch(/^wsm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(memberTokenPrefixOf(token)).toBe(prefix);
    expect(memberTokenMatches(token, hash)).toBe(true);
    const tampered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(memberTokenMatches(tampered, hash)).toBe(false);
    expect(memberTokenPrefixOf('wsk_0123456789ab_x')).toBeUndefined();
  });

  it('are issued for the configured lifetime', () => {
    spec
      .given([])
      .when({
        type: 'IssueMemberToken',
        tokenId,
        workspaceId: wid,
        memberId: 7,
        accountUuid: acc,
        prefix: 'abc',
        secretHash: 'h',
        ttlDays: 30,
        now: t0,
      })
      .then([issued]);
  });

  it('are revoked once', () => {
    const revoked: MemberTokenEvent = {
      type: 'MemberTokenRevoked',
      data: { tokenId, workspaceId: wid, memberId: 7, revokedAt: t0 },
    };
    spec.given([issued]).when({ type: 'RevokeMemberToken', tokenId, now: t0 }).then([revoked]);
    spec.given([issued, revoked]).when({ type: 'RevokeMemberToken', tokenId, now: t0 }).then([]);
    spec.given([]).when({ type: 'RevokeMemberToken', tokenId, now: t0 }).thenThrows(NotFoundError);
  });

  describe('expiry (the worker, when expiresAt has come)', () => {
    const lapse = '2026-12-21T10:00:00.000Z';
    const expire = (now: string) => ({ type: 'ExpireMemberToken' as const, tokenId, now });
    const expired: MemberTokenEvent = {
      type: 'MemberTokenExpired',
      data: { tokenId, workspaceId: wid, memberId: 7, expiredAt: lapse },
    };
    const revoked: MemberTokenEvent = {
      type: 'MemberTokenRevoked',
      data: { tokenId, workspaceId: wid, memberId: 7, revokedAt: t0 },
    };

    it('records the lapse of a live token at or after its expiry', () => {
      spec.given([issued]).when(expire(lapse)).then([expired]);
    });

    it('records nothing for a token already revoked or expired (a job run twice appends once)', () => {
      spec.given([issued, revoked]).when(expire(lapse)).then([]);
      spec.given([issued, expired]).when(expire(lapse)).then([]);
    });

    it('refuses to run early, so the job is retried rather than the lapse lost', () => {
      spec
        .given([issued])
        .when(expire('2026-12-21T09:59:59.999Z'))
        .thenThrows(ConflictError, /not expired yet/);
      spec.given([]).when(expire(lapse)).thenThrows(NotFoundError);
    });

    it('an expired token needs no revoking', () => {
      spec.given([issued, expired]).when({ type: 'RevokeMemberToken', tokenId, now: lapse }).then([]);
    });
  });
});
