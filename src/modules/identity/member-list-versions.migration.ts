import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A version per workspace of what its member list shows, moved by the members projection
 * in the transaction of every change to a row a list can show: the id of that transaction
 * (xid8, never repeated in the cluster, so a version read after a rebuild or a truncate
 * can never match one seen before it). A process keeps rendered pages of the list and
 * serves one again only while its workspace's version is still the one the page was
 * rendered at (queries/member-list.cache.ts). Workspaces without a row read as one
 * version of their own: no member has been written since this table exists, and the
 * first write adds the row.
 */
export class MemberListVersions1764000010000 implements MigrationInterface {
  name = 'MemberListVersions1764000010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE member_list_versions (workspace_id uuid PRIMARY KEY, version bigint NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE member_list_versions`);
  }
}
