import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen: the tables that were versioned when this migration shipped. It must keep doing
 * exactly what it did on databases that have not run it yet, so no table is ever added
 * here; a feature with a new versioned table adds the two columns in its own migration
 * (and declares the table in its @Feature versionedResources).
 */
const TABLES = [
  { table: 'workspaces', stream: `'workspace-' || t.id` },
  { table: 'members', stream: `'member-' || t.id` },
  { table: 'member_roles', stream: `'memberrole-' || t.id` },
];

/**
 * Versions for conditional writes (ETag / If-Match, src/core/http/preconditions.ts):
 * `version` counts the changes a row has shown, `stream_revision` is the revision of the
 * resource's own stream the row reflects. Existing rows take their stream's revision from
 * the PostgreSQL event store; on EventStoreDB, `npm run cli -- projections rebuild` fills it.
 */
export class ResourceVersions1764000005000 implements MigrationInterface {
  name = 'ResourceVersions1764000005000';

  async up(q: QueryRunner): Promise<void> {
    for (const { table, stream } of TABLES) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN version integer NOT NULL DEFAULT 1`);
      await q.query(`ALTER TABLE ${table} ADD COLUMN stream_revision bigint NOT NULL DEFAULT 0`);
      await q.query(
        `UPDATE ${table} t SET stream_revision = coalesce(
           (SELECT max(e.stream_revision) FROM events e WHERE e.stream_name = ${stream}), 0)`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table } of TABLES)
      await q.query(`ALTER TABLE ${table} DROP COLUMN version, DROP COLUMN stream_revision`);
  }
}
