import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CLAIM_FENCED } from '../../../core/claims/claims';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberRoleEvent } from '../domain/member-role';
import {
  EMPTY_FILE_ACCESS,
  EMPTY_SITE_AUDIENCE,
  mergeFileAccess,
  mergeSiteAudience,
} from '../domain/role-access';
import type { WorkspaceEvent } from '../../workspaces';
import { MemberRoleEntity } from './member-role.entity';

type WorkspaceUpdated = Extract<WorkspaceEvent, { type: 'WorkspaceUpdated' }>;

/**
 * The member_roles read model: every live role with its scopes and access. Every event
 * that changes a row bumps its `version` (the ETag), whichever stream it comes from; events
 * of the role's own stream also set `stream_revision` (see core/http/preconditions.ts).
 */
@Injectable()
@Projection({
  name: 'member-roles',
  eventTypes: [
    'MemberRoleCreated',
    'MemberRoleUpdated',
    'MemberRoleDeleted',
    'MemberRolesMerged',
    'WorkspaceUpdated',
    CLAIM_FENCED,
  ],
  tables: ['member_roles'],
})
export class MemberRolesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    if (stored.type === 'WorkspaceUpdated') {
      // A role shows `isDefault`, which is the workspace's setting: when the default moves,
      // the old and the new default change, so every role of the workspace gets a new ETag.
      const d = (stored as StoredEvent<'WorkspaceUpdated', WorkspaceUpdated['data']>).data;
      if (d.settings?.defaultMemberRoleId !== undefined)
        await em.query(`UPDATE member_roles SET version = version + 1 WHERE workspace_id = $1`, [
          d.workspaceId,
        ]);
      return;
    }
    if (stored.type === CLAIM_FENCED) {
      // A name claim taken over (EventStoreDB) fenced this role's stream: the row shows
      // nothing new, but a pinned write must expect the fence's revision.
      const roleId = /^memberrole-(\d+)$/.exec(stored.streamName)?.[1];
      if (roleId)
        await em.query(`UPDATE member_roles SET stream_revision = $2 WHERE id = $1`, [
          Number(roleId),
          stored.revision.toString(),
        ]);
      return;
    }
    const event = { type: stored.type, data: stored.data } as MemberRoleEvent;
    const repo = em.getRepository(MemberRoleEntity);
    switch (event.type) {
      case 'MemberRoleCreated': {
        const d = event.data;
        await repo.upsert(
          {
            id: d.roleId,
            workspaceId: d.workspaceId,
            name: d.name,
            permissions: d.permissions,
            builtIn: d.builtIn,
            siteAudience: d.siteAudience ?? EMPTY_SITE_AUDIENCE,
            fileAccess: d.fileAccess ?? EMPTY_FILE_ACCESS,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision: stored.revision.toString(),
          },
          ['id'],
        );
        return;
      }
      case 'MemberRoleUpdated': {
        const d = event.data;
        await repo.update(
          { id: d.roleId },
          {
            ...(d.name !== undefined ? { name: d.name } : {}),
            ...(d.permissions !== undefined ? { permissions: d.permissions } : {}),
            ...(d.siteAudience ? { siteAudience: d.siteAudience } : {}),
            ...(d.fileAccess ? { fileAccess: d.fileAccess } : {}),
            updatedAt: new Date(d.updatedAt),
            version: () => 'version + 1',
            streamRevision: stored.revision.toString(),
          },
        );
        return;
      }
      case 'MemberRoleDeleted':
        await repo.delete({ id: event.data.roleId });
        return;
      case 'MemberRolesMerged': {
        // Appended to the duplicate's stream: the target's stream is untouched, so only its
        // version moves (a pinned write to the target then sees its If-Match fail).
        const d = event.data;
        const source = await repo.findOneBy({ id: d.sourceRoleId });
        const target = await repo.findOneBy({ id: d.targetRoleId });
        if (source && target && d.resourceAccess === 'copy') {
          await repo.update(
            { id: target.id },
            {
              siteAudience: mergeSiteAudience(target.siteAudience, source.siteAudience),
              fileAccess: mergeFileAccess(target.fileAccess, source.fileAccess),
              updatedAt: new Date(d.mergedAt),
              version: () => 'version + 1',
            },
          );
        }
        await repo.delete({ id: d.sourceRoleId });
        return;
      }
    }
  }
}
