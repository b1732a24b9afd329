import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { announceVersion } from '../../../core/http/kept-reads';
import { REDIS } from '../../../core/redis/redis';

/** The KeptReads kind of a workspace's member list: its version is member_list_versions'. */
export const KEPT_MEMBER_LIST = 'member-list';

/** A workspace whose list a statement of the members projection changed, and the list's new version. */
export interface ListVersionRow {
  workspaceId: string;
  /** This transaction's id as text, the version the statement wrote to member_list_versions. */
  listVersion: string;
}

/**
 * Announces in Redis (core/http/kept-reads.ts) each member-list version the members
 * projection writes, inside its transaction and before the commit, so that every process's
 * kept pages of that workspace's list are stale once the change is visible
 * (queries/member.queries.ts). A failure throws: the projection's batch fails and is
 * retried, rather than committing a version no process would know to reload.
 */
@Injectable()
export class MemberListAnnouncer {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async announce(rows: readonly ListVersionRow[]): Promise<void> {
    const versions = new Map<string, string>();
    for (const r of rows) versions.set(r.workspaceId, r.listVersion);
    await Promise.all(
      [...versions].map(([workspaceId, version]) =>
        announceVersion(this.redis, this.config.redisPrefix, KEPT_MEMBER_LIST, workspaceId, Number(version)),
      ),
    );
  }
}
