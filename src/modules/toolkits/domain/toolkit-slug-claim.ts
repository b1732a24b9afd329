import { ClaimPlan, ClaimRef, ClaimTakenError, defineClaimKind } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { customToolkitDecider, CustomToolkitState } from './toolkit';
import type { CustomToolkitEvent } from './toolkit.events';

/**
 * A custom toolkit's slug is unique per workspace: the toolkit holds a core claim (scope:
 * the workspace, value: the slug) taken with CustomToolkitCreated, moved by a change of
 * slug, and released with CustomToolkitDeleted, so racing writes with one slug make one
 * toolkit.
 */
export const TOOLKIT_SLUG_CLAIM = defineClaimKind({
  name: 'custom_toolkit_slug',
  holds(events, value, scope) {
    const state = fold(customToolkitDecider, events as CustomToolkitEvent[]);
    return state.status === 'live' && state.toolkit.workspaceId === scope && state.toolkit.slug === value;
  },
});

const claimOf = (workspaceId: string, slug: string): ClaimRef => ({
  scope: workspaceId,
  kind: TOOLKIT_SLUG_CLAIM,
  value: slug,
});

/** The claims the decided events take and give up. */
export function toolkitSlugClaims(
  events: readonly CustomToolkitEvent[],
  _before: CustomToolkitState,
): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  for (const e of events) {
    if (e.type === 'CustomToolkitCreated') take.push(claimOf(e.data.workspaceId, e.data.slug));
    if (e.type === 'CustomToolkitUpdated' && e.data.changes.slug !== undefined) {
      take.push(claimOf(e.data.workspaceId, e.data.changes.slug));
      if (e.data.previousSlug !== undefined) release.push(claimOf(e.data.workspaceId, e.data.previousSlug));
    }
    if (e.type === 'CustomToolkitDeleted') release.push(claimOf(e.data.workspaceId, e.data.slug));
  }
  return { take, release };
}

/** The 409 of a slug another toolkit of the workspace holds (owner: `customtoolkit-<id>`). */
export function toolkitSlugConflict(error: ClaimTakenError, slug: string): ConflictError {
  const holder = /^customtoolkit-(\d+)$/.exec(error.owner)?.[1] ?? error.owner;
  return new ConflictError(`slug: custom toolkit ${holder} of this workspace already has the slug "${slug}"`);
}
