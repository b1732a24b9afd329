import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import type { MemberTokenEvent } from './member.events';

export const MEMBER_TOKEN_PREFIX = 'wsm_';
const TOKEN = /^wsm_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

/**
 * Member tokens look like `wsm_<prefix>_<secret>`, like API keys: the public prefix
 * finds the token, only a SHA-256 of the whole token is stored. 256 bits of entropy
 * make a fast hash sufficient.
 */
export function newMemberTokenSecret(): { prefix: string; token: string; hash: string } {
  const prefix = randomBytes(6).toString('hex');
  const token = `${MEMBER_TOKEN_PREFIX}${prefix}_${randomBytes(32).toString('base64url')}`;
  return { prefix, token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function memberTokenPrefixOf(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}

export function memberTokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface MemberTokenState {
  exists: boolean;
  workspaceId: string | null;
  memberId: number | null;
  revoked: boolean;
  expiresAt: string | null;
  expired: boolean;
}

export type MemberTokenCommand =
  | {
      type: 'IssueMemberToken';
      tokenId: string;
      workspaceId: string;
      memberId: number;
      accountUuid: string;
      prefix: string;
      secretHash: string;
      ttlDays: number;
      now: string;
    }
  | { type: 'RevokeMemberToken'; tokenId: string; now: string }
  /** Sent by the expiry worker when the token's expiresAt has come. */
  | { type: 'ExpireMemberToken'; tokenId: string; now: string };

export const memberTokenDecider: Decider<MemberTokenState, MemberTokenCommand, MemberTokenEvent> = {
  initialState: () => ({
    exists: false,
    workspaceId: null,
    memberId: null,
    revoked: false,
    expiresAt: null,
    expired: false,
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'MemberTokenIssued':
        return {
          exists: true,
          workspaceId: event.data.workspaceId,
          memberId: event.data.memberId,
          revoked: false,
          expiresAt: event.data.expiresAt,
          expired: false,
        };
      case 'MemberTokenRevoked':
        return { ...state, revoked: true };
      case 'MemberTokenExpired':
        return { ...state, expired: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'IssueMemberToken': {
        if (state.exists) throw new ConflictError('Token id already used');
        const { type: _type, ttlDays, now, ...rest } = command;
        const expiresAt = new Date(Date.parse(now) + Math.round(ttlDays * 86_400_000)).toISOString();
        return [{ type: 'MemberTokenIssued', data: { ...rest, issuedAt: now, expiresAt } }];
      }
      case 'RevokeMemberToken':
        if (!state.exists) throw new NotFoundError('Token not found');
        // Revoked or lapsed: it already authenticates nothing.
        if (state.revoked || state.expired) return [];
        return [
          {
            type: 'MemberTokenRevoked',
            data: {
              tokenId: command.tokenId,
              workspaceId: state.workspaceId!,
              memberId: state.memberId!,
              revokedAt: command.now,
            },
          },
        ];
      case 'ExpireMemberToken':
        if (!state.exists) throw new NotFoundError('Token not found');
        // Revoked or already expired: nothing to record (a replayed job lands here).
        if (state.revoked || state.expired) return [];
        // Too early (a clock ahead of ours): failing makes the job retry later, never lose the lapse.
        if (Date.parse(state.expiresAt!) > Date.parse(command.now))
          throw new ConflictError('Token has not expired yet');
        return [
          {
            type: 'MemberTokenExpired',
            data: {
              tokenId: command.tokenId,
              workspaceId: state.workspaceId!,
              memberId: state.memberId!,
              expiredAt: command.now,
            },
          },
        ];
    }
  },
};
