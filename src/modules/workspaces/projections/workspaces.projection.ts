import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { announceVersion } from '../../../core/http/kept-reads';
import { REDIS } from '../../../core/redis/redis';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberRolesMerged } from '../../roles';
import type { WorkspaceEvent } from '../domain/workspace';
import { WorkspaceEntity } from './workspace.entity';

/** The KeptReads kind of a workspace's GET answer (queries/workspace.queries.ts). */
export const KEPT_WORKSPACE = 'workspace';

@Injectable()
@Projection({
  name: 'workspaces',
  eventTypes: ['WorkspaceCreated', 'WorkspaceUpdated', 'MemberRolesMerged'],
  tables: ['workspaces'],
})
export class WorkspacesProjection implements ProjectionHandler {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Before the row at `version` commits: every process's kept GET answer of it is then stale. */
  private announce(workspaceId: string, version: number): Promise<void> {
    return announceVersion(this.redis, this.config.redisPrefix, KEPT_WORKSPACE, workspaceId, version);
  }

  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as WorkspaceEvent | MemberRolesMerged;
    const repo = em.getRepository(WorkspaceEntity);
    switch (event.type) {
      case 'WorkspaceCreated':
        await this.announce(event.data.workspaceId, 1);
        await repo.upsert(
          {
            id: event.data.workspaceId,
            name: event.data.name,
            settings: event.data.settings,
            createdAt: new Date(event.data.createdAt),
            updatedAt: new Date(event.data.createdAt),
            version: 1,
            streamRevision: stored.revision.toString(),
          },
          ['id'],
        );
        return;
      case 'WorkspaceUpdated': {
        const row = await repo.findOneBy({ id: event.data.workspaceId });
        if (!row) return;
        if (event.data.name !== undefined) row.name = event.data.name;
        if (event.data.settings) row.settings = { ...row.settings, ...event.data.settings };
        row.updatedAt = new Date(event.data.updatedAt);
        row.version++;
        row.streamRevision = stored.revision.toString();
        await this.announce(row.id, row.version);
        await repo.save(row);
        return;
      }
      case 'MemberRolesMerged': {
        // A merge deletes the default role and moves its holders: the default follows them.
        if (!event.data.workspaceDefaultMoved) return;
        const row = await repo.findOneBy({ id: event.data.workspaceId });
        if (!row) return;
        row.settings = { ...row.settings, defaultMemberRoleId: event.data.targetRoleId };
        row.updatedAt = new Date(event.data.mergedAt);
        row.version++;
        await this.announce(row.id, row.version);
        await repo.save(row);
        return;
      }
    }
  }
}
