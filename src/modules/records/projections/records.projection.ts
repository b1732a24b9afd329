import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CLAIM_FENCED } from '../../../core/claims/claims';
import { copyRows } from '../../../core/database/copy-rows';
import { queryPreparedIn } from '../../../core/database/prepared';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { writeWithCommit } from '../../../core/projections/commit-statements';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { DataRecordCreated, DataRecordEvent } from '../domain/data-record.events';
import { DataField, DataTypeEvent, TEXT_LIKE_TYPES } from '../domain/data-type.events';
import { datetimeIndexForm, datetimeIndexFormSql, foldCase, foldCaseSql } from '../domain/field-values';

const TEXT_LIKE = `(${TEXT_LIKE_TYPES.map((t) => `'${t}'`).join(', ')})`;

/**
 * What a record shows the indexes, computed in SQL from its values and its type's fields
 * (so a changed `shouldIndex` recomputes every record of the type in one statement):
 * the indexed fields' values, text-like ones lower-cased, datetimes as their UTC instant
 * (datetimeIndexForm), and the text values joined.
 */
const indexedValuesOf = (values: string, fields: string) => `(
  SELECT COALESCE(jsonb_object_agg(e.key, CASE WHEN f->>'fieldType' IN ${TEXT_LIKE}
           THEN to_jsonb(${foldCaseSql(`e.value #>> '{}'`)})
           WHEN f->>'fieldType' = 'datetime' AND jsonb_typeof(e.value) = 'string'
           THEN to_jsonb(${datetimeIndexFormSql(`(e.value #>> '{}')`)}) ELSE e.value END), '{}'::jsonb)
    FROM jsonb_each(${values}) e JOIN jsonb_array_elements(${fields}) f ON f->>'slug' = e.key
   WHERE (f->>'shouldIndex')::boolean)`;
const searchTextOf = (values: string, fields: string) => `(
  SELECT string_agg(${foldCaseSql(`e.value #>> '{}'`)}, E'\\n' ORDER BY e.key)
    FROM jsonb_each(${values}) e JOIN jsonb_array_elements(${fields}) f ON f->>'slug' = e.key
   WHERE (f->>'shouldIndex')::boolean AND f->>'fieldType' IN ${TEXT_LIKE})`;

/**
 * From this many new records a batch's rows go in by COPY (an import's batches of 500);
 * below, one INSERT (a request's batch of a few: COPY costs a savepoint and two round trips).
 */
export const COPY_FROM = 50;
const COLUMNS = [
  'id',
  'workspace_id',
  'data_type_id',
  'member_id',
  'external_id',
  'field_values',
  'indexed_values',
  'search_text',
  'created_at',
  'updated_at',
  'version',
  'stream_revision',
];

/** How an indexed field's value goes into the index: case-folded text, a UTC instant, or as it is. */
export type IndexedKind = 'text' | 'datetime' | 'plain';

/** A type's indexed fields by slug, with their kind. */
function indexedFields(fields: readonly DataField[]): Map<string, IndexedKind> {
  const out = new Map<string, IndexedKind>();
  for (const f of fields)
    if (f.shouldIndex === true)
      out.set(
        f.slug,
        TEXT_LIKE_TYPES.includes(f.fieldType) ? 'text' : f.fieldType === 'datetime' ? 'datetime' : 'plain',
      );
  return out;
}

/** `indexedValuesOf` and `searchTextOf` of one record's values, in JavaScript. */
export function indexColumns(
  values: unknown,
  indexed: ReadonlyMap<string, IndexedKind>,
): { indexed_values: Record<string, unknown>; search_text: string | null } {
  const out: Record<string, unknown> = {};
  const texts: [string, string][] = [];
  if (typeof values === 'object' && values !== null && !Array.isArray(values)) {
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      const kind = indexed.get(key);
      if (kind === undefined) continue;
      if (kind !== 'text') {
        out[key] = kind === 'datetime' && typeof value === 'string' ? datetimeIndexForm(value) : value;
        continue;
      }
      // `value #>> '{}'`: a string as is, null as null, anything else as its JSON text.
      const text =
        value === null || value === undefined
          ? null
          : foldCase(typeof value === 'string' ? value : JSON.stringify(value));
      out[key] = text;
      if (text !== null) texts.push([key, text]);
    }
  }
  // Slugs are ASCII ([a-z][a-z0-9_]*): code-unit order is the database's C order.
  texts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { indexed_values: out, search_text: texts.length ? texts.map((t) => t[1]).join('\n') : null };
}

/**
 * The data_types and data_records read models, one projection so a record's row always
 * finds its type's (the index columns derive from the type's fields). A bulk import's
 * DataRecordCreated events land as multi-row inserts.
 */
@Injectable()
@Projection({
  name: 'records',
  eventTypes: [
    'DataTypeCreated',
    'DataTypeUpdated',
    'DataTypeDeleted',
    'DataRecordCreated',
    'DataRecordUpdated',
    'DataRecordDeleted',
    CLAIM_FENCED,
  ],
  tables: ['data_types', 'data_records'],
})
export class RecordsProjection implements ProjectionHandler {
  handle(event: StoredEvent, em: EntityManager): Promise<void> {
    return this.handleBatch([event], em);
  }

  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    let created: StoredEvent[] = [];
    for (const event of events) {
      if (event.type === 'DataRecordCreated') {
        created.push(event);
        continue;
      }
      if (created.length) await this.insertRecords(created, em);
      created = [];
      await this.apply(event, em);
    }
    if (created.length) await this.insertRecords(created, em);
  }

  /**
   * New records as one COPY (an import's batch) or one multi-row insert. Their index columns are computed here from the
   * type's fields (read once per batch, in the batch's transaction) rather than by the SQL
   * of `indexedValuesOf`/`searchTextOf` per row: the same values (text-like values
   * lower-cased as the filters lower-case them, search text ordered by slug), at about
   * half the cost of the statement for an import's batch of thousands (the per-row
   * `jsonb_each` joins took ~200 ms of ~400 ms for 10,000 records).
   */
  private async insertRecords(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    const typeIds = [...new Set(events.map((e) => (e.data as DataRecordCreated['data']).dataTypeId))];
    // Named: one statement planned once per connection, not on every batch.
    const types = await queryPreparedIn<{ id: number; fields: DataField[] }>(
      em,
      `SELECT id, fields FROM data_types WHERE id = ANY($1::int[])`,
      [typeIds],
    );
    const indexedOf = new Map(types.map((t) => [t.id, indexedFields(t.fields)]));
    const rows: unknown[][] = [];
    for (const stored of events) {
      const d = (stored as StoredEvent<'DataRecordCreated', DataRecordCreated['data']>).data;
      const indexed = indexedOf.get(d.dataTypeId);
      // A record of a type already deleted has no row (as the join with data_types had it).
      if (!indexed) continue;
      const { indexed_values, search_text } = indexColumns(d.fieldValues, indexed);
      rows.push([
        d.recordId,
        d.workspaceId,
        d.dataTypeId,
        d.memberId,
        d.externalId,
        d.fieldValues,
        indexed_values,
        search_text,
        d.createdAt,
        d.createdAt,
        1,
        stored.revision.toString(),
      ]);
    }
    if (!rows.length) return;
    // A replayed record (its row already there) makes COPY fail: copyRows then falls back
    // to the INSERT, which skips it.
    if (rows.length >= COPY_FROM)
      await copyRows(em, 'data_records', COLUMNS, rows, () => this.insert(rows, em, false));
    // A request's few records go with the batch's COMMIT (core/projections/commit-statements.ts).
    else await this.insert(rows, em, true);
  }

  private async insert(rows: readonly unknown[][], em: EntityManager, withCommit: boolean): Promise<void> {
    await (withCommit ? writeWithCommit : (m: EntityManager, sql: string, p: unknown[]) => m.query(sql, p))(
      em,
      `INSERT INTO data_records (${COLUMNS.join(', ')})
       SELECT r.id, r.workspace_id, r.data_type_id, r.member_id, r.external_id, r.field_values,
              r.indexed_values, r.search_text, r.created_at, r.updated_at, r.version, r.stream_revision
         FROM jsonb_to_recordset($1::jsonb) AS r(id integer, workspace_id uuid, data_type_id integer,
              member_id integer, external_id text, field_values jsonb, indexed_values jsonb, search_text text,
              created_at timestamptz, updated_at timestamptz, version integer, stream_revision bigint)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(rows.map((row) => Object.fromEntries(COLUMNS.map((c, i) => [c, row[i]]))))],
    );
  }

  private async apply(stored: StoredEvent, em: EntityManager): Promise<void> {
    if (stored.type === CLAIM_FENCED) {
      // A claim taken over (EventStoreDB) fenced this stream: a pinned write must expect the fence.
      const m = /^(datatype|record)-(\d+)$/.exec(stored.streamName);
      if (m)
        await em.query(
          `UPDATE ${m[1] === 'record' ? 'data_records' : 'data_types'} SET stream_revision = $2 WHERE id = $1`,
          [Number(m[2]), stored.revision.toString()],
        );
      return;
    }
    const revision = stored.revision.toString();
    const event = { type: stored.type, data: stored.data } as DataTypeEvent | DataRecordEvent;
    switch (event.type) {
      case 'DataTypeCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO data_types (id, workspace_id, name, slug, is_collection, visibility, fields, owner_member_id,
                                   created_at, updated_at, version, stream_revision)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $9, 1, $10) ON CONFLICT (id) DO NOTHING`,
          [
            d.dataTypeId,
            d.workspaceId,
            d.name,
            d.slug,
            d.isCollection,
            d.visibility,
            JSON.stringify(d.fields),
            d.ownerMemberId,
            d.createdAt,
            revision,
          ],
        );
        return;
      }
      case 'DataTypeUpdated': {
        const d = event.data;
        await em.query(
          `UPDATE data_types SET name = COALESCE($2, name), slug = COALESCE($3, slug),
                  is_collection = COALESCE($4, is_collection), visibility = COALESCE($5, visibility),
                  fields = COALESCE($6::jsonb, fields), updated_at = $7, version = version + 1, stream_revision = $8
            WHERE id = $1`,
          [
            d.dataTypeId,
            d.name ?? null,
            d.slug ?? null,
            d.isCollection ?? null,
            d.visibility ?? null,
            d.fields ? JSON.stringify(d.fields) : null,
            d.updatedAt,
            revision,
          ],
        );
        if (d.fields) {
          // Values of select fields that lost their option go first (only those values).
          for (const slug of d.narrowedFields ?? [])
            await em.query(
              `UPDATE data_records SET field_values = field_values - $2::text, version = version + 1
                WHERE data_type_id = $1 AND field_values ? $2 AND NOT (field_values->>$2 = ANY($3::text[]))`,
              [d.dataTypeId, slug, d.fields.find((f) => f.slug === slug)?.options ?? []],
            );
          // Values of removed or retyped fields are dropped; the indexes follow the new shouldIndex flags.
          const dropped = [...(d.removedFields ?? []), ...(d.retypedFields ?? [])];
          await em.query(
            `UPDATE data_records r
                SET field_values = r.field_values - $2::text[],
                    indexed_values = ${indexedValuesOf('(r.field_values - $2::text[])', 't.fields')},
                    search_text = ${searchTextOf('(r.field_values - $2::text[])', 't.fields')},
                    version = r.version + CASE WHEN r.field_values ?| $2::text[] THEN 1 ELSE 0 END
               FROM data_types t
              WHERE t.id = $1 AND r.data_type_id = t.id`,
            [d.dataTypeId, dropped],
          );
        }
        return;
      }
      case 'DataTypeDeleted':
        // The records' rows stay until their own DataRecordDeleted (the deletion lists them
        // here once this projection has passed it, so a record that committed just before
        // the type's deletion is found and deleted too); with the type gone no route reads them.
        await em.query(`DELETE FROM data_types WHERE id = $1`, [event.data.dataTypeId]);
        return;
      case 'DataRecordCreated':
        return this.insertRecords([stored], em);
      case 'DataRecordUpdated': {
        const d = event.data;
        await em.query(
          `UPDATE data_records r
              SET field_values = $2::jsonb,
                  indexed_values = ${indexedValuesOf('$2::jsonb', 't.fields')},
                  search_text = ${searchTextOf('$2::jsonb', 't.fields')},
                  updated_at = $3, version = r.version + 1, stream_revision = $4
             FROM data_types t
            WHERE r.id = $1 AND t.id = r.data_type_id`,
          [d.recordId, JSON.stringify(d.fieldValues), d.updatedAt, revision],
        );
        return;
      }
      case 'DataRecordDeleted':
        await em.query(`DELETE FROM data_records WHERE id = $1`, [event.data.recordId]);
        return;
    }
  }
}
