import { MigrationInterface, QueryRunner } from 'typeorm';

/** Phone numbers, inboxes, chats, their messages and deliveries, and SMS opt-outs. */
export class Messaging1764000007600 implements MigrationInterface {
  name = 'Messaging1764000007600';

  async up(q: QueryRunner): Promise<void> {
    for (const seq of ['phone_number_id_seq', 'inbox_id_seq', 'chat_id_seq', 'chat_message_id_seq'])
      await q.query(`CREATE SEQUENCE IF NOT EXISTS ${seq}`);
    await q.query(`
      CREATE TABLE phone_numbers (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        number text NOT NULL,
        name text,
        signup_role_id integer,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL,
        stream_revision bigint NOT NULL
      )`);
    await q.query(`CREATE INDEX phone_numbers_workspace ON phone_numbers (workspace_id, id)`);
    await q.query(`CREATE INDEX phone_numbers_number ON phone_numbers (number)`);
    await q.query(`
      CREATE TABLE inboxes (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        email text NOT NULL,
        name text,
        owner_member_id integer,
        granted_member_ids integer[] NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX inboxes_workspace ON inboxes (workspace_id, id)`);
    await q.query(`CREATE INDEX inboxes_email ON inboxes (email)`);
    await q.query(`
      CREATE TABLE chats (
        id integer PRIMARY KEY,
        uuid uuid NOT NULL,
        workspace_id uuid NOT NULL,
        channel text NOT NULL,
        member_id integer NOT NULL,
        phone_number_id integer,
        assistant_kind text NOT NULL,
        assistant_member_id integer,
        participants jsonb NOT NULL,
        participant_ids integer[] NOT NULL,
        title text,
        paused boolean NOT NULL,
        needs_response boolean NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL,
        stream_revision bigint NOT NULL
      )`);
    await q.query(`CREATE INDEX chats_workspace ON chats (workspace_id, id)`);
    await q.query(`CREATE INDEX chats_member ON chats (workspace_id, member_id, channel)`);
    await q.query(`CREATE INDEX chats_participants ON chats USING gin (participant_ids)`);
    await q.query(`
      CREATE TABLE chat_messages (
        id integer PRIMARY KEY,
        chat_id integer NOT NULL,
        workspace_id uuid NOT NULL,
        direction text NOT NULL,
        role text NOT NULL,
        content text NOT NULL,
        subject text,
        sender_member_id integer,
        encoding text,
        segments integer,
        status text NOT NULL,
        failure_reason text,
        provider_message_id text,
        created_at timestamptz NOT NULL,
        delivered_at timestamptz
      )`);
    await q.query(`CREATE INDEX chat_messages_chat ON chat_messages (chat_id, id)`);
    await q.query(`
      CREATE TABLE message_deliveries (
        message_id integer NOT NULL,
        member_id integer NOT NULL,
        chat_id integer NOT NULL,
        workspace_id uuid NOT NULL,
        status text NOT NULL,
        failure_reason text,
        provider_message_id text,
        updated_at timestamptz NOT NULL,
        delivered_at timestamptz,
        PRIMARY KEY (message_id, member_id)
      )`);
    await q.query(`CREATE INDEX message_deliveries_chat ON message_deliveries (chat_id)`);
    await q.query(`
      CREATE TABLE sms_opt_outs (
        workspace_id uuid NOT NULL,
        member_id integer NOT NULL,
        keyword text NOT NULL,
        opted_out_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, member_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'sms_opt_outs',
      'message_deliveries',
      'chat_messages',
      'chats',
      'inboxes',
      'phone_numbers',
    ])
      await q.query(`DROP TABLE ${t}`);
    for (const seq of ['chat_message_id_seq', 'chat_id_seq', 'inbox_id_seq', 'phone_number_id_seq'])
      await q.query(`DROP SEQUENCE ${seq}`);
  }
}
