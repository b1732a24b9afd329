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
  | { type: 'RevokeMemberToken'; tokenId: string; now: string };

export const memberTokenDecider: Decider<MemberTokenState, MemberTokenCommand, MemberTokenEvent> = {
  initialState: () => ({ exists: false, workspaceId: null, memberId: null, revoked: false }),

  evolve(state, event) {
    switch (event.type) {
      case 'MemberTokenIssued':
        return {
          exists: true,
          workspaceId: event.data.workspaceId,
          memberId: event.data.memberId,
          revoked: false,
        };
      case 'MemberTokenRevoked':
        return { ...state, revoked: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'IssueMemberToken': {
        if (state.exists) throw new ConflictError('Token id already used');
        const { type: _type, ttlDays, now, ...rest } = command;
        const expiresAt = new Date(Date.parse(now) + ttlDays * 86_400_000).toISOString();
        return [{ type: 'MemberTokenIssued', data: { ...rest, issuedAt: now, expiresAt } }];
      }
      case 'RevokeMemberToken':
        if (!state.exists) throw new NotFoundError('Token not found');
        if (state.revoked) return [];
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
    }
  },
};
