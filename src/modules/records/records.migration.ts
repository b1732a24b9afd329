import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The records feature's read models: data types, data records and record grants, with
 * their id sequences. `indexed_values` (the record's shouldIndex fields, text lower-cased)
 * and `search_text` (its indexed text-like values, lower-cased) exist for the planner: a
 * GIN index each, so `field.<slug>=` filters (containment) and `search` (trigram ILIKE)
 * find records without reading every row of the type. Their pending lists (GIN's fast
 * update) are kept small: a bulk import's entries would otherwise sit in a list the planner
 * counts as expensive to scan, and searches right after it would read the whole table
 * until autovacuum merged them.
 */
export class RecordsTables1764000007000 implements MigrationInterface {
  name = 'RecordsTables1764000007000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS data_type_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS data_record_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS record_grant_id_seq`);
    await q.query(`
      CREATE TABLE data_types (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        slug text NOT NULL,
        is_collection boolean NOT NULL,
        visibility text NOT NULL,
        fields jsonb NOT NULL,
        owner_member_id integer,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX data_types_workspace ON data_types (workspace_id, id)`);
    await q.query(`
      CREATE TABLE data_records (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        data_type_id integer NOT NULL,
        member_id integer,
        external_id text,
        field_values jsonb NOT NULL,
        indexed_values jsonb NOT NULL DEFAULT '{}',
        search_text text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX data_records_type ON data_records (data_type_id, id)`);
    await q.query(`CREATE INDEX data_records_member ON data_records (data_type_id, member_id)`);
    await q.query(`CREATE INDEX data_records_external_id ON data_records (data_type_id, external_id)`);
    await q.query(
      `CREATE INDEX data_records_indexed_values ON data_records USING gin (indexed_values jsonb_path_ops) WITH (gin_pending_list_limit = 256)`,
    );
    await q.query(
      `CREATE INDEX data_records_search ON data_records USING gin (search_text gin_trgm_ops) WITH (gin_pending_list_limit = 256)`,
    );
    await q.query(`
      CREATE TABLE record_grants (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        grantee_member_id integer NOT NULL,
        owner_member_id integer NOT NULL,
        access text NOT NULL,
        data_type_id integer,
        granted_by integer,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX record_grants_grantee ON record_grants (workspace_id, grantee_member_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE record_grants`);
    await q.query(`DROP TABLE data_records`);
    await q.query(`DROP TABLE data_types`);
    await q.query(`DROP SEQUENCE record_grant_id_seq`);
    await q.query(`DROP SEQUENCE data_record_id_seq`);
    await q.query(`DROP SEQUENCE data_type_id_seq`);
  }
}
