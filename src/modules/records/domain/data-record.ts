import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type { DataField, Visibility } from './data-type.events';
import type { DataRecordEvent, RecordMember } from './data-record.events';
import { checkNewValues, checkValueChanges, FieldValue, FieldValues } from './field-values';

export const EXTERNAL_ID_MAX = 255;

/** The data type as a record decision needs it (loaded from the type's stream by the handler). */
export interface DataTypeFacts {
  dataTypeId: number;
  workspaceId: string;
  name: string;
  slug: string;
  isCollection: boolean;
  visibility: Visibility;
  fields: DataField[];
  ownerMemberId: number | null;
  /** Per slug, when a forced schema change last dropped the field's values (data-type.ts). */
  droppedAt?: Readonly<Record<string, string>>;
}

export type DataRecordCommand =
  | {
      type: 'CreateRecord';
      recordId: number;
      dataType: DataTypeFacts;
      memberId: number | null;
      /** The member as identity shows it; undefined when memberId names no member of the workspace. */
      member: RecordMember | null | undefined;
      externalId: string | null;
      fieldValues: unknown;
      now: string;
    }
  | {
      type: 'UpdateRecord';
      dataType: DataTypeFacts;
      fieldValues: unknown;
      member: RecordMember | null;
      now: string;
    }
  | {
      /**
       * Undoes an update that a schema change crossed (RecordWriter.update): each field it
       * wrote, still holding what it wrote, goes back to its previous value if that still
       * fits the type as it now is (`dataType`), else is cleared.
       */
      type: 'RevertUpdate';
      /** The type the update was decided against. */
      decidedAgainst: DataTypeFacts;
      dataType: DataTypeFacts;
      written: Record<string, FieldValue | null>;
      previous: Record<string, FieldValue | null>;
      member: RecordMember | null;
      now: string;
    }
  | { type: 'DeleteRecord'; dataType: DataTypeFacts; now: string };

export interface DataRecordState {
  status: 'absent' | 'active' | 'deleted';
  recordId: number;
  workspaceId: string;
  dataTypeId: number;
  memberId: number | null;
  externalId: string | null;
  fieldValues: FieldValues;
  /** Per field slug, when its value was last set (to compare with the type's droppedAt). */
  setAt: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

const initialState = (): DataRecordState => ({
  status: 'absent',
  recordId: 0,
  workspaceId: '',
  dataTypeId: 0,
  memberId: null,
  externalId: null,
  fieldValues: {},
  setAt: {},
  createdAt: '',
  updatedAt: '',
});

/** An externalId as stored: trimmed, 1-255 characters; null only when not given (or null). */
export function normaliseExternalId(raw: unknown, path = 'externalId'): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') throw new ValidationError(`${path}: must be a string`);
  const id = raw.trim();
  // A blank id is a client's mistake (an empty form field, a missing column), not "none":
  // taken as null it would create a record that no later upsert of that row ever finds.
  if (!id) throw new ValidationError(`${path}: must not be empty (leave it out for no externalId)`);
  if (id.length > EXTERNAL_ID_MAX)
    throw new ValidationError(`${path}: must be at most ${EXTERNAL_ID_MAX} characters`);
  return id;
}

export function requireRecord(state: DataRecordState, dataType: DataTypeFacts): void {
  // Another workspace's or another type's record reads as absent.
  if (
    state.status !== 'active' ||
    state.workspaceId !== dataType.workspaceId ||
    state.dataTypeId !== dataType.dataTypeId
  )
    throw new NotFoundError('Record not found');
}

/** A key of the object itself, not of Object.prototype (a field may be called `constructor`). */
const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

const typeRef = (t: DataTypeFacts) => ({ id: t.dataTypeId, slug: t.slug, name: t.name });

/**
 * Whether values decided against `before` still fit the type as it now is (`after`): each
 * field still there, of the same type, a select value still among its options, and none
 * of their values dropped since (PUT with force, data-type.ts droppedAt).
 */
export function valuesStillFit(
  before: DataTypeFacts,
  after: DataTypeFacts,
  values: Readonly<Record<string, FieldValue | null>>,
): boolean {
  const was = new Map(before.fields.map((f) => [f.slug, f]));
  const now = new Map(after.fields.map((f) => [f.slug, f]));
  return Object.entries(values).every(([slug, value]) => {
    if (value === null) return true;
    const f = now.get(slug);
    if (!f || f.fieldType !== was.get(slug)?.fieldType) return false;
    if (f.fieldType === 'select' && !(f.options ?? []).includes(value as string)) return false;
    return before.droppedAt?.[slug] === after.droppedAt?.[slug];
  });
}

/**
 * The record's values the type `t` still holds: values of fields the schema dropped (PUT
 * data type with force) go with the next change: the fields it no longer has, and those it
 * removed or retyped after the value was set (though the field be back since, the value is
 * not). A select value whose option the type no longer offers goes too.
 */
function heldValues(state: DataRecordState, t: DataTypeFacts): FieldValues {
  const bySlug = new Map(t.fields.map((f) => [f.slug, f]));
  const dropped = t.droppedAt ?? {};
  const stillHeld = (k: string, v: FieldValue) => {
    const field = bySlug.get(k);
    if (!field) return false;
    if (own(dropped, k) && (own(state.setAt, k) ? state.setAt[k] : '') <= dropped[k]) return false;
    return field.fieldType !== 'select' || (field.options ?? []).includes(v as string);
  };
  return Object.fromEntries(Object.entries(state.fieldValues).filter(([k, v]) => stillHeld(k, v)));
}

/** The DataRecordUpdated setting `changes` on the held values, or none when nothing changes. */
function updated(
  state: DataRecordState,
  t: DataTypeFacts,
  changes: Readonly<Record<string, FieldValue | null>>,
  member: RecordMember | null,
  now: string,
  /** What a change is compared with (default: the held values). */
  before: FieldValues = heldValues(state, t),
): DataRecordEvent[] {
  const next = heldValues(state, t);
  const changed: Record<string, FieldValue | null> = {};
  const previous: Record<string, FieldValue | null> = {};
  for (const [key, value] of Object.entries(changes)) {
    const was = own(before, key) ? before[key] : null;
    if (was === value) continue;
    changed[key] = value;
    previous[key] = was;
    if (value === null) delete next[key];
    else next[key] = value;
  }
  if (!Object.keys(changed).length) return [];
  return [
    {
      type: 'DataRecordUpdated',
      data: {
        recordId: state.recordId,
        workspaceId: state.workspaceId,
        dataTypeId: state.dataTypeId,
        memberId: state.memberId,
        externalId: state.externalId,
        changes: changed,
        previous,
        fieldValues: next,
        dataType: typeRef(t),
        member,
        updatedAt: now,
      },
    },
  ];
}

export const dataRecordDecider: Decider<DataRecordState, DataRecordCommand, DataRecordEvent> = {
  initialState,

  evolve(state, event) {
    switch (event.type) {
      case 'DataRecordCreated': {
        const d = event.data;
        return {
          status: 'active',
          recordId: d.recordId,
          workspaceId: d.workspaceId,
          dataTypeId: d.dataTypeId,
          memberId: d.memberId,
          externalId: d.externalId,
          fieldValues: d.fieldValues,
          setAt: Object.fromEntries(Object.keys(d.fieldValues).map((k) => [k, d.createdAt])),
          createdAt: d.createdAt,
          updatedAt: d.createdAt,
        };
      }
      case 'DataRecordUpdated': {
        const d = event.data;
        const setAt = { ...state.setAt };
        for (const [k, v] of Object.entries(d.changes)) {
          if (v === null) delete setAt[k];
          else setAt[k] = d.updatedAt;
        }
        return { ...state, fieldValues: d.fieldValues, setAt, updatedAt: d.updatedAt };
      }
      case 'DataRecordDeleted':
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateRecord': {
        if (state.status !== 'absent')
          throw new ConflictError(`A record with id ${command.recordId} already exists`);
        const t = command.dataType;
        if (command.memberId !== null && !command.member)
          throw new ValidationError('memberId: no member with this id in this workspace');
        return [
          {
            type: 'DataRecordCreated',
            data: {
              recordId: command.recordId,
              workspaceId: t.workspaceId,
              dataTypeId: t.dataTypeId,
              memberId: command.memberId,
              externalId: command.externalId,
              fieldValues: checkNewValues(t.fields, command.fieldValues),
              dataType: typeRef(t),
              member: command.member ?? null,
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateRecord': {
        const t = command.dataType;
        requireRecord(state, t);
        const changes = checkValueChanges(t.fields, command.fieldValues);
        return updated(state, t, changes, command.member, command.now);
      }
      case 'RevertUpdate': {
        const t = command.dataType;
        requireRecord(state, t);
        const back: Record<string, FieldValue | null> = {};
        for (const [key, value] of Object.entries(command.written)) {
          // Changed again since: that change stands.
          if ((own(state.fieldValues, key) ? state.fieldValues[key] : null) !== value) continue;
          const prev = command.previous[key] ?? null;
          back[key] = valuesStillFit(command.decidedAgainst, t, { [key]: prev }) ? prev : null;
        }
        // Against the values as stored: one the type no longer holds is cleared in the
        // changes too (the read model may show it: the update's row came after the drop).
        return updated(state, t, back, command.member, command.now, state.fieldValues);
      }
      case 'DeleteRecord': {
        requireRecord(state, command.dataType);
        return [
          {
            type: 'DataRecordDeleted',
            data: {
              recordId: state.recordId,
              workspaceId: state.workspaceId,
              dataTypeId: state.dataTypeId,
              memberId: state.memberId,
              externalId: state.externalId,
              deletedAt: command.now,
            },
          },
        ];
      }
    }
  },
};
