import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Members per workspace and status, kept by the members projection in the transaction of
 * the rows it counts: the member list's `total` without counting the workspace's rows on
 * every page (the common list: no filter but the status, seen by an admin).
 */
export class MemberCounts1764000008500 implements MigrationInterface {
  name = 'MemberCounts1764000008500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE member_counts (workspace_id uuid NOT NULL, status text NOT NULL,
         members integer NOT NULL, PRIMARY KEY (workspace_id, status))`,
    );
    await q.query(
      `INSERT INTO member_counts (workspace_id, status, members)
       SELECT workspace_id, status, count(*) FROM members GROUP BY workspace_id, status`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE member_counts`);
  }
}
