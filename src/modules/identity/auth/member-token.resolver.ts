import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ResolvesCredentialsWithPrefix } from '../../../core/auth/credential-resolvers';
import { Credential, CredentialResolver } from '../../../core/auth/principal';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { MEMBER_TOKEN_PREFIX, memberTokenMatches, memberTokenPrefixOf } from '../domain/member-token';

const TOKEN_ENDING_EVENTS = new Set(['MemberTokenRevoked', 'MemberTokensRevoked', 'MemberArchived']);

interface TokenRow {
  id: string;
  secret_hash: string;
  workspace_id: string;
  member_id: number;
  account_uuid: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  expired_at: Date | null;
  tokens_revoked_before: Date | null;
  status: string | null;
}

/**
 * Member tokens from signup: bound to one member of one workspace, with no scopes of
 * their own, so they reach only what self-access allows (own profile, own chats and
 * records). Dead when expired, revoked one by one, revoked with all the member's
 * tokens, or when the member is archived.
 */
@Injectable()
@ResolvesCredentialsWithPrefix(MEMBER_TOKEN_PREFIX)
export class MemberTokenCredentialResolver implements CredentialResolver {
  constructor(
    private readonly db: DataSource,
    feed: CheckpointFeed,
  ) {
    // Resolved tokens are cached (core AuthCache): these events end them.
    feed.invalidateAuthOn((e) => TOKEN_ENDING_EVENTS.has(e.type));
  }

  async resolve(token: string): Promise<Credential | undefined> {
    const prefix = memberTokenPrefixOf(token);
    if (!prefix) return undefined;
    const rows = (await this.db.query(
      `SELECT t.id, t.secret_hash, t.workspace_id, t.member_id, t.account_uuid, t.created_at, t.expires_at, t.revoked_at, t.expired_at,
              m.tokens_revoked_before, m.status
         FROM member_tokens t LEFT JOIN members m ON m.id = t.member_id
        WHERE t.prefix = $1`,
      [prefix],
    )) as TokenRow[];
    const t = rows[0];
    if (!t || t.revoked_at || t.expired_at || t.expires_at.getTime() <= Date.now() || t.status !== 'active')
      return undefined;
    if (t.tokens_revoked_before && t.created_at.getTime() <= t.tokens_revoked_before.getTime())
      return undefined;
    if (!memberTokenMatches(token, t.secret_hash)) return undefined;
    return {
      kind: 'member_token',
      credentialId: t.id,
      accountUuid: t.account_uuid,
      scopes: [],
      workspaceId: t.workspace_id,
      memberId: t.member_id,
      expiresAt: t.expires_at.getTime(),
    };
  }
}
