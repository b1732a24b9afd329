import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import {
  DataField,
  DataTypeEvent,
  FIELD_TYPES,
  FieldType,
  VISIBILITIES,
  Visibility,
} from './data-type.events';

export const SLUG = /^[a-z][a-z0-9_]*$/;
export const SLUG_MAX = 64;
export const DATA_TYPE_NAME_MAX = 200;
export const MAX_FIELDS = 100;
export const MAX_OPTIONS = 200;
export const OPTION_MAX = 200;

/** A field as a client sends it (the DTO checked the shape, not the rules). */
export interface DataFieldInput {
  name: string;
  slug: string;
  fieldType: string;
  required?: boolean;
  shouldIndex?: boolean;
  options?: string[];
}

export type DataTypeCommand =
  | {
      type: 'CreateDataType';
      dataTypeId: number;
      workspaceId: string;
      name: string;
      slug: string;
      isCollection?: boolean;
      visibility?: string;
      fields: DataFieldInput[];
      ownerMemberId: number | null;
      now: string;
    }
  | {
      type: 'UpdateDataType';
      dataTypeId: number;
      workspaceId: string;
      name?: string;
      slug?: string;
      isCollection?: boolean;
      visibility?: string;
      fields?: DataFieldInput[];
      /** Remove or retype fields that hold values (their values are dropped). */
      force: boolean;
      /** Which of the type's fields hold a value in some record (from the records read model). */
      fieldsHoldingValues: readonly string[];
      /**
       * Which select fields hold, in some record, a value the new options leave out
       * (the handler asks the read model about the options this command sends).
       */
      fieldsHoldingOtherOptions?: readonly string[];
      recordCount: number;
      now: string;
    }
  | {
      type: 'DeleteDataType';
      dataTypeId: number;
      workspaceId: string;
      recordCount: number;
      force: boolean;
      now: string;
    };

export interface DataTypeState {
  status: 'absent' | 'active' | 'deleted';
  dataTypeId: number;
  workspaceId: string;
  name: string;
  slug: string;
  isCollection: boolean;
  visibility: Visibility;
  fields: DataField[];
  ownerMemberId: number | null;
  /**
   * Per field slug, when a forced PUT last removed or retyped it (its `updatedAt`): a
   * record's value set before then was dropped and must not come back with the record's
   * next change (data-record.ts), even when the field has been added again since.
   */
  droppedAt: Record<string, string>;
}

const initialState = (): DataTypeState => ({
  status: 'absent',
  dataTypeId: 0,
  workspaceId: '',
  name: '',
  slug: '',
  isCollection: true,
  visibility: 'workspace',
  fields: [],
  ownerMemberId: null,
  droppedAt: {},
});

function checkName(name: string, field: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError(`${field}: must not be empty`);
  if (trimmed.length > DATA_TYPE_NAME_MAX)
    throw new ValidationError(`${field}: must be at most ${DATA_TYPE_NAME_MAX} characters`);
  return trimmed;
}

/**
 * Slugs are keys of JSON objects (`fieldValues`, signup's `data`), and the request
 * pipeline deletes these two keys from every body it validates (prototype-pollution
 * hygiene): a field or type so named could never be given a value.
 */
export const RESERVED_SLUGS: readonly string[] = ['constructor', 'prototype'];

export function checkSlug(slug: string, field: string): string {
  if (slug.length > SLUG_MAX) throw new ValidationError(`${field}: must be at most ${SLUG_MAX} characters`);
  if (!SLUG.test(slug))
    throw new ValidationError(
      `${field}: must start with a lower-case letter and hold only a-z, 0-9 and _ (${SLUG.source})`,
    );
  if (RESERVED_SLUGS.includes(slug))
    throw new ValidationError(`${field}: ${RESERVED_SLUGS.join(' and ')} are reserved; choose another slug`);
  return slug;
}

function checkVisibility(v: string): Visibility {
  if (!(VISIBILITIES as readonly string[]).includes(v))
    throw new ValidationError(`visibility: must be one of ${VISIBILITIES.join(', ')}`);
  return v as Visibility;
}

/** The fields of a schema, checked: slugs valid and unique, types known, options only on select. */
export function checkFields(input: readonly DataFieldInput[]): DataField[] {
  if (input.length > MAX_FIELDS) throw new ValidationError(`fields: at most ${MAX_FIELDS} fields`);
  const seen = new Set<string>();
  return input.map((f, i) => {
    const at = `fields.${i}`;
    const name = checkName(f.name, `${at}.name`);
    const slug = checkSlug(f.slug, `${at}.slug`);
    if (seen.has(slug))
      throw new ValidationError(`${at}.slug: "${slug}" is used by another field of this type`);
    seen.add(slug);
    if (!(FIELD_TYPES as readonly string[]).includes(f.fieldType))
      throw new ValidationError(`${at}.fieldType: must be one of ${FIELD_TYPES.join(', ')}`);
    const fieldType = f.fieldType as FieldType;
    const field: DataField = {
      name,
      slug,
      fieldType,
      required: f.required ?? false,
      shouldIndex: f.shouldIndex ?? false,
    };
    if (fieldType === 'select') {
      const options = f.options ?? [];
      if (!options.length)
        throw new ValidationError(`${at}.options: a select field needs at least one option`);
      if (options.length > MAX_OPTIONS)
        throw new ValidationError(`${at}.options: at most ${MAX_OPTIONS} options`);
      options.forEach((o, j) => {
        if (!o.trim() || o.length > OPTION_MAX)
          throw new ValidationError(`${at}.options.${j}: must be 1-${OPTION_MAX} characters`);
      });
      if (new Set(options).size !== options.length)
        throw new ValidationError(`${at}.options: options must be distinct`);
      field.options = [...options];
    } else if (f.options !== undefined) {
      throw new ValidationError(`${at}.options: only a select field takes options`);
    }
    return field;
  });
}

function requireType(state: DataTypeState, workspaceId: string): void {
  // Another workspace's type reads as absent: ids must not let a caller probe other tenants.
  if (state.status !== 'active' || state.workspaceId !== workspaceId)
    throw new NotFoundError('Data type not found');
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function decideUpdate(
  command: Extract<DataTypeCommand, { type: 'UpdateDataType' }>,
  state: DataTypeState,
): DataTypeEvent[] {
  requireType(state, command.workspaceId);
  const data: Extract<DataTypeEvent, { type: 'DataTypeUpdated' }>['data'] = {
    dataTypeId: state.dataTypeId,
    workspaceId: state.workspaceId,
    updatedAt: command.now,
  };
  if (command.name !== undefined) {
    const name = checkName(command.name, 'name');
    if (name !== state.name) data.name = name;
  }
  if (command.slug !== undefined && checkSlug(command.slug, 'slug') !== state.slug) data.slug = command.slug;
  if (command.visibility !== undefined) {
    const v = checkVisibility(command.visibility);
    if (v !== state.visibility) data.visibility = v;
  }
  if (command.isCollection !== undefined && command.isCollection !== state.isCollection) {
    // At most one record per member is kept by a claim per record, taken only while the
    // type is not a collection: switching with records in place would leave it unenforced.
    if (command.recordCount > 0)
      throw new ConflictError(
        `isCollection: cannot change while the type has ${command.recordCount} record(s)`,
      );
    data.isCollection = command.isCollection;
  }
  if (command.fields !== undefined) {
    const fields = checkFields(command.fields);
    const next = new Map(fields.map((f) => [f.slug, f]));
    const removed = state.fields.filter((f) => !next.has(f.slug)).map((f) => f.slug);
    const retyped = state.fields
      .filter((f) => next.has(f.slug) && next.get(f.slug)!.fieldType !== f.fieldType)
      .map((f) => f.slug);
    const holding = [...removed, ...retyped].filter((s) => command.fieldsHoldingValues.includes(s));
    if (holding.length && !command.force)
      throw new ConflictError(
        `fields: ${holding.join(', ')} hold values in existing records; removing or retyping them drops those values, send force: true to do so`,
      );
    // A select field that keeps its type but loses options some record holds: those values
    // no longer fit, as a retyped field's do not; only they are dropped.
    const narrowed = state.fields
      .filter(
        (f) =>
          f.fieldType === 'select' &&
          next.get(f.slug)?.fieldType === 'select' &&
          (f.options ?? []).some((o) => !(next.get(f.slug)!.options ?? []).includes(o)) &&
          (command.fieldsHoldingOtherOptions ?? []).includes(f.slug),
      )
      .map((f) => f.slug);
    if (narrowed.length && !command.force) {
      const at = fields.findIndex((f) => f.slug === narrowed[0]);
      throw new ConflictError(
        `fields.${at}.options: ${narrowed.join(', ')} ${narrowed.length > 1 ? 'hold' : 'holds'} values in existing records that the new options leave out; send force: true to drop those values`,
      );
    }
    if (!sameJson(fields, state.fields)) {
      data.fields = fields;
      if (removed.length) data.removedFields = removed;
      if (retyped.length) data.retypedFields = retyped;
      if (narrowed.length) data.narrowedFields = narrowed;
    }
  }
  if (Object.keys(data).length === 3) return [];
  return [{ type: 'DataTypeUpdated', data }];
}

export const dataTypeDecider: Decider<DataTypeState, DataTypeCommand, DataTypeEvent> = {
  initialState,

  evolve(state, event) {
    switch (event.type) {
      case 'DataTypeCreated': {
        const d = event.data;
        return {
          status: 'active',
          dataTypeId: d.dataTypeId,
          workspaceId: d.workspaceId,
          name: d.name,
          slug: d.slug,
          isCollection: d.isCollection,
          visibility: d.visibility,
          fields: d.fields,
          ownerMemberId: d.ownerMemberId,
          droppedAt: {},
        };
      }
      case 'DataTypeUpdated': {
        const d = event.data;
        const dropped = [...(d.removedFields ?? []), ...(d.retypedFields ?? [])];
        return {
          ...state,
          name: d.name ?? state.name,
          slug: d.slug ?? state.slug,
          isCollection: d.isCollection ?? state.isCollection,
          visibility: d.visibility ?? state.visibility,
          fields: d.fields ?? state.fields,
          droppedAt: dropped.length
            ? { ...state.droppedAt, ...Object.fromEntries(dropped.map((slug) => [slug, d.updatedAt])) }
            : state.droppedAt,
        };
      }
      case 'DataTypeDeleted':
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateDataType': {
        if (state.status !== 'absent')
          throw new ConflictError(`A data type with id ${command.dataTypeId} already exists`);
        return [
          {
            type: 'DataTypeCreated',
            data: {
              dataTypeId: command.dataTypeId,
              workspaceId: command.workspaceId,
              name: checkName(command.name, 'name'),
              slug: checkSlug(command.slug, 'slug'),
              isCollection: command.isCollection ?? true,
              visibility: checkVisibility(command.visibility ?? 'workspace'),
              fields: checkFields(command.fields),
              ownerMemberId: command.ownerMemberId,
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateDataType':
        return decideUpdate(command, state);
      case 'DeleteDataType': {
        requireType(state, command.workspaceId);
        if (command.recordCount > 0 && !command.force)
          throw new ConflictError(
            `Data type ${state.dataTypeId} has ${command.recordCount} record(s); delete them first or send force=true`,
          );
        return [
          {
            type: 'DataTypeDeleted',
            data: {
              dataTypeId: state.dataTypeId,
              workspaceId: state.workspaceId,
              slug: state.slug,
              deletedAt: command.now,
            },
          },
        ];
      }
    }
  },
};
