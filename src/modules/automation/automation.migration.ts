import { MigrationInterface, QueryRunner } from 'typeorm';

/** Event rules (read model, versioned for If-Match) and the webhook delivery log. */
export class Automation1764000007400 implements MigrationInterface {
  name = 'Automation1764000007400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS event_rule_id_seq`);
    await q.query(`
      CREATE TABLE event_rules (
        id integer PRIMARY KEY,
        uuid uuid NOT NULL UNIQUE,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        event_type text NOT NULL,
        action_type text NOT NULL,
        webhook_url text NOT NULL,
        payload_format text NOT NULL,
        filters jsonb NOT NULL DEFAULT '{}',
        max_per_second integer,
        secret text,
        previous_secret text,
        previous_secret_until timestamptz,
        enabled boolean NOT NULL,
        enabled_since timestamptz NOT NULL,
        disabled_reason text,
        disabled_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL,
        stream_revision bigint NOT NULL
      )`);
    await q.query(
      `CREATE INDEX event_rules_matching ON event_rules (workspace_id, event_type) WHERE enabled`,
    );
    await q.query(`CREATE INDEX event_rules_workspace ON event_rules (workspace_id, id)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL,
        rule_id integer NOT NULL,
        event_id uuid,
        event_type text NOT NULL,
        status text NOT NULL,
        is_test boolean NOT NULL DEFAULT false,
        body text NOT NULL,
        attempts jsonb NOT NULL DEFAULT '[]',
        attempt_count integer NOT NULL DEFAULT 0,
        last_status integer,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL,
        completed_at timestamptz,
        redeliveries integer NOT NULL DEFAULT 0
      )`);
    await q.query(
      `CREATE UNIQUE INDEX webhook_deliveries_event_rule ON webhook_deliveries (event_id, rule_id) WHERE event_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries (workspace_id, created_at DESC)`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_rule ON webhook_deliveries (rule_id, completed_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE event_rules`);
    await q.query(`DROP SEQUENCE event_rule_id_seq`);
  }
}
