import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { AuthCache } from '../../../core/auth/auth-cache';
import { Credential, Membership, MembershipResolver } from '../../../core/auth/principal';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { GetRoleScopesQuery } from '../../roles';

/** Events after which a membership or its role's scopes may differ. */
function changesMembership(e: StoredEvent): boolean {
  switch (e.type) {
    case 'MemberArchived':
    case 'MemberRoleUpdated':
    case 'MemberRoleDeleted':
    case 'MemberRolesMerged':
      return true;
    case 'MemberUpdated':
      return (e.data as { changes?: { memberRoleId?: unknown } }).changes?.memberRoleId !== undefined;
    default:
      return false;
  }
}

/**
 * The caller's active membership and its role's scopes, cached in core's AuthCache
 * until an event above is projected (in any process) or AUTH_CACHE_TTL_MS passes, so a
 * role change applies on the next request.
 */
@Injectable()
export class IdentityMembershipResolver implements MembershipResolver {
  constructor(
    private readonly db: DataSource,
    private readonly cache: AuthCache,
    private readonly queries: QueryBus,
    feed: CheckpointFeed,
  ) {
    feed.invalidateAuthOn(changesMembership);
  }

  find(workspaceId: string, credential: Credential): Promise<Membership | undefined> {
    // The assistant acting as an agent member (core's assistantCredential): that member by
    // id, in the workspace the credential names only, while it is an active agent.
    if (credential.kind === 'assistant') {
      const agentId = credential.memberId;
      if (credential.workspaceId !== workspaceId || agentId === undefined) return Promise.resolve(undefined);
      return this.cache.get(`membership:${workspaceId}:assistant:${agentId}`, () =>
        this.loadAgent(workspaceId, agentId),
      );
    }
    const memberId = credential.memberId ?? null;
    return this.cache.get(`membership:${workspaceId}:${credential.accountUuid}:${memberId ?? ''}`, () =>
      this.load(workspaceId, credential.accountUuid, memberId),
    );
  }

  private async loadAgent(workspaceId: string, memberId: number): Promise<Membership | undefined> {
    const rows = (await this.db.query(
      `SELECT m.id, m.member_role_id
         FROM members m
        WHERE m.workspace_id = $1 AND m.id = $2 AND m.kind = 'agent' AND m.status = 'active'`,
      [workspaceId, memberId],
    )) as { id: number; member_role_id: number }[];
    const m = rows[0];
    if (!m) return undefined;
    const roleScopes = await this.queries.execute<GetRoleScopesQuery, string[]>(
      new GetRoleScopesQuery(workspaceId, m.member_role_id),
    );
    return { workspaceId, memberId: m.id, roleId: m.member_role_id, roleScopes, kind: 'agent' };
  }

  private async load(
    workspaceId: string,
    accountUuid: string,
    memberId: number | null,
  ): Promise<Membership | undefined> {
    const rows = (await this.db.query(
      `SELECT m.id, m.member_role_id, m.kind
         FROM members m
        WHERE m.workspace_id = $1 AND m.account_uuid = $2 AND m.status = 'active'
          AND ($3::int IS NULL OR m.id = $3)
        ORDER BY m.id LIMIT 1`,
      [workspaceId, accountUuid, memberId],
    )) as { id: number; member_role_id: number; kind: 'person' | 'agent' }[];
    const m = rows[0];
    if (!m) return undefined;
    // The role's scopes are roles' to answer (its table); a cache miss costs one more query.
    const roleScopes = await this.queries.execute<GetRoleScopesQuery, string[]>(
      new GetRoleScopesQuery(workspaceId, m.member_role_id),
    );
    return { workspaceId, memberId: m.id, roleId: m.member_role_id, roleScopes, kind: m.kind };
  }
}
