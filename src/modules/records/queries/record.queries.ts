import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import {
  escapeLike,
  listFilterConditions,
  PageRequest,
  Paginated,
  paginated,
} from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import type { DataField, Visibility } from '../domain/data-type.events';
import { TEXT_LIKE_TYPES } from '../domain/data-type.events';
import { datetimeIndexForm, FieldValues, foldCase, normaliseValue } from '../domain/field-values';
import {
  assertMayRead,
  assertTypeRecordsAccess,
  listScope,
  RecordCaller,
  seesDataType,
} from '../domain/record-access.policy';
import { RecordWriter } from '../commands/record-writer.service';
import type { RecordResponse } from '../http/dto/record.dto';
import { normaliseExternalId } from '../domain/data-record';

export const RECORD_SORTS = ['id', '-id', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt'] as const;
const SORT_SQL: Record<(typeof RECORD_SORTS)[number], string> = {
  id: 'id ASC',
  '-id': 'id DESC',
  createdAt: 'created_at ASC, id ASC',
  '-createdAt': 'created_at DESC, id DESC',
  updatedAt: 'updated_at ASC, id ASC',
  '-updatedAt': 'updated_at DESC, id DESC',
};

export interface RecordFilters {
  memberId?: number;
  externalId?: string;
  /** `field.<slug>=value` query parameters: slug → raw value. */
  fields: Record<string, string>;
  sort?: (typeof RECORD_SORTS)[number];
}

interface RecordRow {
  id: number;
  data_type_id: number;
  member_id: number | null;
  external_id: string | null;
  field_values: FieldValues;
  created_at: Date;
  updated_at: Date;
  version: number;
}

const SELECT = `SELECT id, data_type_id, member_id, external_id, field_values, created_at, updated_at, version FROM data_records`;

function toResponse(r: RecordRow): RecordResponse {
  return {
    id: r.id,
    dataTypeId: r.data_type_id,
    memberId: r.member_id,
    externalId: r.external_id,
    fieldValues: r.field_values,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

async function typeRow(
  db: DataSource,
  workspaceId: string,
  dataTypeId: number,
): Promise<{ id: number; visibility: Visibility; fields: DataField[] }> {
  const rows = (await db.query(
    `SELECT id, visibility, fields FROM data_types WHERE id = $1 AND workspace_id = $2`,
    [dataTypeId, workspaceId],
  )) as { id: number; visibility: Visibility; fields: DataField[] }[];
  if (!rows.length) throw new NotFoundError('Data type not found');
  return rows[0];
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A `field.<slug>` filter value as the index holds it (typed; text-like lower-cased). */
function filterValue(field: DataField | undefined, slug: string, raw: string): unknown {
  const path = `query field.${slug}`;
  if (!field) throw new ValidationError(`${path}: the data type has no such field`);
  if (!field.shouldIndex)
    throw new ValidationError(
      `${path}: only fields with shouldIndex can be filtered on; this one is not indexed`,
    );
  let value: unknown = raw;
  if (field.fieldType === 'number') {
    // A decimal number as JSON writes it: not `0x10`, `+5`, `.5`, ` 5` or `Infinity`, which
    // Number() would take for a number the client never meant.
    if (!JSON_NUMBER.test(raw))
      throw new ValidationError(`${path}: must be a decimal number as JSON writes it, e.g. 42, -1.5 or 1e3`);
    value = Number(raw);
  }
  if (field.fieldType === 'boolean') {
    if (raw !== 'true' && raw !== 'false') throw new ValidationError(`${path}: must be true or false`);
    value = raw === 'true';
  }
  const normalised = normaliseValue(field, value, path);
  if (field.fieldType === 'datetime') return datetimeIndexForm(normalised as string);
  return TEXT_LIKE_TYPES.includes(field.fieldType) ? foldCase(String(normalised)) : normalised;
}

export class ListRecordsQuery {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly page: PageRequest,
    readonly filters: RecordFilters,
    readonly caller: RecordCaller,
  ) {}
}

export class GetRecordQuery {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly recordId: number,
    readonly caller: RecordCaller,
    /** The caller just wrote it (and was allowed to): answer it without the read rules. */
    readonly afterWrite = false,
  ) {}
}

/**
 * A type's records the caller may see (record-access.policy.ts listScope). `search` and
 * `field.<slug>` go through the GIN indexes on `search_text` and `indexed_values`.
 */
@QueryHandler(ListRecordsQuery)
export class ListRecordsHandler implements IQueryHandler<ListRecordsQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly records: RecordWriter,
  ) {}

  async execute(q: ListRecordsQuery): Promise<Paginated<RecordResponse>> {
    const type = await typeRow(this.db, q.workspaceId, q.dataTypeId);
    assertTypeRecordsAccess(q.caller, type.visibility);
    const scope = listScope(q.caller, type.id, await this.records.heldGrants(q.workspaceId, q.caller));
    const params: unknown[] = [q.workspaceId, type.id];
    const where = ['workspace_id = $1', 'data_type_id = $2'];
    if (!scope.all) {
      const visible: string[] = [];
      if (scope.selfId !== null) {
        params.push(scope.selfId);
        visible.push(`member_id = $${params.length}`);
      }
      if (scope.unowned) visible.push('member_id IS NULL');
      if (scope.owners.length) {
        params.push(scope.owners);
        visible.push(`member_id = ANY($${params.length}::int[])`);
      }
      where.push(visible.length ? `(${visible.join(' OR ')})` : 'false');
    }
    if (q.filters.memberId !== undefined) {
      params.push(q.filters.memberId);
      where.push(`member_id = $${params.length}`);
    }
    if (q.filters.externalId !== undefined) {
      // Blank names no record (none is stored blank): the same 400 as on create.
      params.push(normaliseExternalId(q.filters.externalId, 'query externalId'));
      where.push(`external_id = $${params.length}`);
    }
    const byField = new Map(type.fields.map((f) => [f.slug, f]));
    const contains = Object.create(null) as Record<string, unknown>;
    for (const [slug, raw] of Object.entries(q.filters.fields))
      contains[slug] = filterValue(byField.get(slug), slug, raw);
    if (Object.keys(contains).length) {
      params.push(JSON.stringify(contains));
      where.push(`indexed_values @> $${params.length}::jsonb`);
    }
    const { search, ...window } = q.page;
    if (search !== undefined) {
      // search_text is case-folded when written (foldCase); the trigram index serves ILIKE.
      params.push(`%${escapeLike(foldCase(search))}%`);
      where.push(`search_text ILIKE $${params.length} ESCAPE '\\'`);
    }
    where.push(...listFilterConditions(window, { search: [], time: 'created_at' }, params));
    const sql = where.join(' AND ');
    const order = SORT_SQL[q.filters.sort ?? 'id'];
    const [rows, count] = await Promise.all([
      this.db.query(
        `${SELECT} WHERE ${sql} ORDER BY ${order} LIMIT ${q.page.pageSize} OFFSET ${q.page.offset}`,
        params,
      ),
      this.db.query(`SELECT count(*)::int AS n FROM data_records WHERE ${sql}`, params),
    ]);
    return paginated((rows as RecordRow[]).map(toResponse), (count as { n: number }[])[0].n, q.page);
  }
}

@QueryHandler(GetRecordQuery)
export class GetRecordHandler implements IQueryHandler<GetRecordQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly records: RecordWriter,
  ) {}

  async execute(q: GetRecordQuery): Promise<RecordResponse> {
    // The type and the record in one round trip (a create answers with this read): no
    // type row, the type's 404; a type row without a record, the record's.
    const rows = (await this.db.query(
      `SELECT t.visibility, r.id, r.data_type_id, r.member_id, r.external_id, r.field_values,
              r.created_at, r.updated_at, r.version
         FROM data_types t
         LEFT JOIN data_records r ON r.id = $1 AND r.workspace_id = t.workspace_id AND r.data_type_id = t.id
        WHERE t.id = $3 AND t.workspace_id = $2`,
      [q.recordId, q.workspaceId, q.dataTypeId],
    )) as (Omit<RecordRow, 'id'> & { id: number | null; visibility: Visibility })[];
    if (!rows.length) throw new NotFoundError('Data type not found');
    const { visibility, ...found } = rows[0];
    // A type the caller does not see is absent, whether or not the record exists.
    if (!q.afterWrite && !seesDataType(q.caller, visibility)) throw new NotFoundError('Data type not found');
    if (found.id === null) throw new NotFoundError('Record not found');
    const row = found as RecordRow;
    const type = { id: q.dataTypeId, visibility };
    if (!q.afterWrite)
      assertMayRead(
        q.caller,
        { memberId: row.member_id, dataTypeId: type.id, visibility: type.visibility },
        await this.records.heldGrants(q.workspaceId, q.caller),
      );
    return withVersion(toResponse(row), row.version);
  }
}
