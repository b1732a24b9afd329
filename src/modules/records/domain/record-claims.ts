import { ClaimPlan, ClaimRef, ClaimTakenError, defineClaimKind } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { DataRecordState, dataRecordDecider } from './data-record';
import type { DataRecordEvent } from './data-record.events';
import { dataTypeDecider, DataTypeState } from './data-type';
import type { DataTypeEvent } from './data-type.events';

/** Data type slugs are unique per workspace (owner: `datatype-<id>`). */
export const DATA_TYPE_SLUG_CLAIM = defineClaimKind({
  name: 'data_type_slug',
  holds(events, value, scope) {
    const t = fold(dataTypeDecider, events as DataTypeEvent[]);
    return t.status === 'active' && t.workspaceId === scope && t.slug === value;
  },
});

/** Record externalIds are unique per data type (scope `<wid>:<dataTypeId>`, owner `record-<id>`). */
export const RECORD_EXTERNAL_ID_CLAIM = defineClaimKind({
  name: 'data_record_external_id',
  holds(events, value, scope) {
    const r = fold(dataRecordDecider, events as DataRecordEvent[]);
    return (
      r.status === 'active' && recordScope(r.workspaceId, r.dataTypeId) === scope && r.externalId === value
    );
  },
});

/**
 * One record per member in a type that is not a collection (a profile form): the record
 * claims its member's id in the type, taken only while the type is not a collection.
 */
export const RECORD_MEMBER_CLAIM = defineClaimKind({
  name: 'data_record_member',
  holds(events, value, scope) {
    const r = fold(dataRecordDecider, events as DataRecordEvent[]);
    return (
      r.status === 'active' &&
      recordScope(r.workspaceId, r.dataTypeId) === scope &&
      String(r.memberId) === value
    );
  },
});

export const recordScope = (workspaceId: string, dataTypeId: number): string =>
  `${workspaceId}:${dataTypeId}`;

const slugClaim = (workspaceId: string, slug: string): ClaimRef => ({
  scope: workspaceId,
  kind: DATA_TYPE_SLUG_CLAIM,
  value: slug,
});

export function externalIdClaim(workspaceId: string, dataTypeId: number, externalId: string): ClaimRef {
  return { scope: recordScope(workspaceId, dataTypeId), kind: RECORD_EXTERNAL_ID_CLAIM, value: externalId };
}

/** The slug claims the decided events take and give up, given the type before them. */
export function dataTypeClaims(events: readonly DataTypeEvent[], before: DataTypeState): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  let slug = before.status === 'active' ? before.slug : undefined;
  for (const e of events) {
    const ws = e.data.workspaceId;
    if (e.type === 'DataTypeCreated') {
      slug = e.data.slug;
      take.push(slugClaim(ws, slug));
    } else if (e.type === 'DataTypeUpdated' && e.data.slug !== undefined && slug !== undefined) {
      release.push(slugClaim(ws, slug));
      slug = e.data.slug;
      take.push(slugClaim(ws, slug));
    } else if (e.type === 'DataTypeDeleted' && slug !== undefined) {
      release.push(slugClaim(ws, slug));
      slug = undefined;
    }
  }
  return { take, release };
}

/** The claims of a record's events: its externalId, and its member in a type that is no collection. */
export function recordClaims(
  events: readonly DataRecordEvent[],
  before: DataRecordState,
  isCollection: boolean,
): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  const refsOf = (ws: string, typeId: number, externalId: string | null, memberId: number | null) => [
    ...(externalId !== null ? [externalIdClaim(ws, typeId, externalId)] : []),
    ...(memberId !== null && !isCollection
      ? [{ scope: recordScope(ws, typeId), kind: RECORD_MEMBER_CLAIM, value: String(memberId) }]
      : []),
  ];
  for (const e of events) {
    const d = e.data;
    if (e.type === 'DataRecordCreated')
      take.push(...refsOf(d.workspaceId, d.dataTypeId, d.externalId, d.memberId));
    else if (e.type === 'DataRecordDeleted' && before.status === 'active')
      // A member claim that was never taken (the type was a collection then) releases nothing.
      release.push(
        ...refsOf(d.workspaceId, d.dataTypeId, d.externalId, null),
        ...(d.memberId !== null
          ? [
              {
                scope: recordScope(d.workspaceId, d.dataTypeId),
                kind: RECORD_MEMBER_CLAIM,
                value: String(d.memberId),
              },
            ]
          : []),
      );
  }
  return { take, release };
}

export function slugConflict(slug: string): ConflictError {
  return new ConflictError(`slug: another data type of this workspace already has the slug "${slug}"`);
}

/** The record id holding a claim (owner `record-<id>`). */
export function recordIdOf(owner: string): number | undefined {
  const m = /^record-(\d+)$/.exec(owner);
  return m ? Number(m[1]) : undefined;
}

/** The 409 of a record claim another record holds; names no value (externalIds may be PHI-adjacent). */
export function recordClaimConflict(error: ClaimTakenError): ConflictError {
  const holder = recordIdOf(error.owner) ?? error.owner;
  return error.kind === RECORD_MEMBER_CLAIM.name
    ? new ConflictError(
        `memberId: this data type is not a collection and the member already has record ${holder} of it`,
      )
    : new ConflictError(`externalId: record ${holder} of this data type already has this externalId`);
}
