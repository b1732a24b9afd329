import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { AuthCache } from '../../../core/auth/auth-cache';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { GetWorkspaceSettingsQuery, WorkspaceSettings } from '../../workspaces';
import type { WorkspaceEvent } from '../../workspaces';

/** A workspace event that changes what a send reads of its settings (quiet hours, time zone). */
function changesSendSettings(e: StoredEvent): boolean {
  if (e.type !== 'WorkspaceUpdated') return false;
  const settings = (e.data as Extract<WorkspaceEvent, { type: 'WorkspaceUpdated' }>['data']).settings;
  return settings !== undefined && ('smsQuietHours' in settings || 'timezone' in settings);
}

/**
 * The workspace's settings as a send reads them (quiet hours and the workspace's time zone),
 * once per workspace and AUTH_CACHE_TTL_MS (1 s) at most instead of once per send. Kept in
 * core's AuthCache: a change of either setting empties it in every process once a
 * projection batch holding the WorkspaceUpdated commits (in this process at once, in the
 * others through the checkpoint NOTIFY), so the send after a PUT that changed them, which
 * waits for the workspaces read model, reads them anew; a load begun before that notice is
 * not kept. Nothing is kept while the notices of other processes do not arrive.
 */
@Injectable()
export class WorkspaceSendSettings {
  constructor(
    private readonly queries: QueryBus,
    private readonly cache: AuthCache,
    feed: CheckpointFeed,
  ) {
    feed.invalidateAuthOn(changesSendSettings);
  }

  get(workspaceId: string): Promise<WorkspaceSettings | undefined> {
    return this.cache.get(`messaging-send-settings:${workspaceId}`, () =>
      this.queries.execute<GetWorkspaceSettingsQuery, WorkspaceSettings | undefined>(
        new GetWorkspaceSettingsQuery(workspaceId),
      ),
    );
  }
}
