import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource, In } from 'typeorm';
import { AuthCache } from '../../../core/auth/auth-cache';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { queryPrepared } from '../../../core/database/prepared';
import { streamOf, WorkspaceSettings, workspaceDecider } from '../domain/workspace';
import { WorkspaceEntity } from '../projections/workspace.entity';

/**
 * The role id stored as a workspace's default for new members (null: the built-in User
 * role, in workspaces created before bootstrap named it; also for no such workspace).
 *
 * - `read-model` (roles' listings and checks): the workspaces row, which also applies
 *   role merges (MemberRolesMerged moves the default without a workspace event).
 * - `stream` (identity's signup decision): what the workspace stream last set, the source
 *   of truth; the caller follows merges itself from the role's stream. Every signup asks
 *   it, so the answer is kept in core's AuthCache: emptied in every process once a
 *   change of the default is projected (and after AUTH_CACHE_TTL_MS at most), the same
 *   bound as a role change for the members who hold it.
 */
export class GetWorkspaceDefaultRoleQuery {
  constructor(
    readonly workspaceId: string,
    readonly source: 'read-model' | 'stream' = 'read-model',
  ) {}
}

/** A workspace event that may change its default role for new members. */
function changesDefaultRole(e: StoredEvent): boolean {
  return (
    e.type === 'WorkspaceUpdated' &&
    (e.data as { settings?: { defaultMemberRoleId?: unknown } }).settings?.defaultMemberRoleId !== undefined
  );
}

@QueryHandler(GetWorkspaceDefaultRoleQuery)
export class GetWorkspaceDefaultRoleHandler implements IQueryHandler<
  GetWorkspaceDefaultRoleQuery,
  number | null
> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly cache: AuthCache,
    feed: CheckpointFeed,
  ) {
    feed.invalidateAuthOn(changesDefaultRole);
  }

  async execute(q: GetWorkspaceDefaultRoleQuery): Promise<number | null> {
    if (q.source === 'stream') {
      let found: number | null = null;
      const cached = await this.cache.get(`workspace-default-role:${q.workspaceId}`, async () => {
        const { state, exists } = await this.repo.load(streamOf(q.workspaceId), workspaceDecider);
        found = state.settings.defaultMemberRoleId ?? null;
        // Only of a workspace that exists: one created after a miss must be seen at once.
        return exists ? { roleId: found } : undefined;
      });
      return cached ? cached.roleId : found;
    }
    const row = await this.db
      .getRepository(WorkspaceEntity)
      .findOne({ select: { id: true, settings: true }, where: { id: q.workspaceId } });
    return row?.settings.defaultMemberRoleId ?? null;
  }
}

/** Workspace names by id, for features that show where something lives (GET /me). */
export class GetWorkspaceNamesQuery {
  constructor(readonly workspaceIds: readonly string[]) {}
}

@QueryHandler(GetWorkspaceNamesQuery)
export class GetWorkspaceNamesHandler implements IQueryHandler<GetWorkspaceNamesQuery, Map<string, string>> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWorkspaceNamesQuery): Promise<Map<string, string>> {
    if (!q.workspaceIds.length) return new Map();
    const rows = await this.db
      .getRepository(WorkspaceEntity)
      .find({ select: { id: true, name: true }, where: { id: In([...new Set(q.workspaceIds)]) } });
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}

/**
 * A workspace's settings as its read model shows them (messaging's quiet hours and time
 * zone); undefined for no such workspace.
 */
export class GetWorkspaceSettingsQuery {
  constructor(readonly workspaceId: string) {}
}

@QueryHandler(GetWorkspaceSettingsQuery)
export class GetWorkspaceSettingsHandler implements IQueryHandler<
  GetWorkspaceSettingsQuery,
  WorkspaceSettings | undefined
> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWorkspaceSettingsQuery): Promise<WorkspaceSettings | undefined> {
    const [row] = await queryPrepared<{ settings: WorkspaceSettings }>(
      this.db,
      'SELECT settings FROM workspaces WHERE id = $1',
      [q.workspaceId],
    );
    return row?.settings;
  }
}
