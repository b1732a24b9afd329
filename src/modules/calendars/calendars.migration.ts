import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The calendars and calendar_events read models and their id sequences. An event's
 * `during` is a stored tstzrange ([start, end), or the single instant [start, start] for an
 * event without an end), so a window query is one overlap test (`during && window`) served
 * by the GiST index on (workspace_id, during); btree_gist lets that index lead with the
 * workspace (a trusted extension since PostgreSQL 13: a database owner may create it).
 */
export class CalendarsTables1764000007200 implements MigrationInterface {
  name = 'CalendarsTables1764000007200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gist`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS calendar_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS calendar_event_id_seq`);
    await q.query(`
      CREATE TABLE calendars (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        owner_member_id integer,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX calendars_workspace ON calendars (workspace_id, id)`);
    await q.query(`CREATE INDEX calendars_owner ON calendars (workspace_id, owner_member_id)`);
    await q.query(`
      CREATE TABLE calendar_events (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        calendar_id integer,
        title text NOT NULL,
        description text,
        start_time timestamptz NOT NULL,
        end_time timestamptz,
        during tstzrange NOT NULL GENERATED ALWAYS AS (
          CASE WHEN end_time IS NULL THEN tstzrange(start_time, start_time, '[]')
               ELSE tstzrange(start_time, end_time, '[)') END
        ) STORED,
        attendee_member_ids integer[] NOT NULL DEFAULT '{}',
        organizer_member_id integer,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX calendar_events_workspace ON calendar_events (workspace_id, start_time, id)`);
    await q.query(`CREATE INDEX calendar_events_during ON calendar_events USING gist (workspace_id, during)`);
    await q.query(`CREATE INDEX calendar_events_calendar ON calendar_events (calendar_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE calendar_events`);
    await q.query(`DROP TABLE calendars`);
    await q.query(`DROP SEQUENCE calendar_event_id_seq`);
    await q.query(`DROP SEQUENCE calendar_id_seq`);
  }
}
