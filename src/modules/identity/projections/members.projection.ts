import { Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CLAIM_FENCED } from '../../../core/claims/claims';
import { queryPreparedIn } from '../../../core/database/prepared';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberRolesMerged } from '../../roles';
import type { AccountRegistered, MemberCreated } from '../domain/identity.events';
import type { AccountUpdated, MemberEvent, MemberChanges, MemberTokenEvent } from '../domain/member.events';
import { memberIdOf } from '../domain/member-claims';
import { MemberVersions } from './member-versions';
import { ListVersionRow, MemberListAnnouncer } from './member-list-announcer';

/** A change the member's representation shows, from its own stream (see core/http/preconditions.ts). */
const CHANGED = 'version = version + 1, stream_revision';

/**
 * The member list's version of each workspace among the rows of `changed` (a CTE
 * returning workspace_id) set to this transaction's id: every statement changing what a
 * member list shows runs with it, so a page rendered before the change is never served
 * after it (queries/member-list.cache.ts). Written in the same statement, not one more.
 */
const bumpListVersions = (changed: string) =>
  `INSERT INTO member_list_versions (workspace_id, version)
   SELECT DISTINCT workspace_id, pg_current_xact_id()::text::bigint FROM ${changed}
   ON CONFLICT (workspace_id) DO UPDATE SET version = EXCLUDED.version`;

/** The workspaces of the rows of `changed` with the list version written for them (ListVersionRow). */
const LIST_VERSION_COLUMNS = `workspace_id AS "workspaceId", pg_current_xact_id()::text AS "listVersion"`;

/**
 * `update` (an UPDATE of members aliased m) with the list versions of the rows it changed
 * moved; it answers each changed row's id, version, stream revision and role (MemberVersions),
 * and its workspace's new list version (MemberListAnnouncer).
 */
const updatingListVersions = (update: string) =>
  `WITH changed AS (${update} RETURNING m.id, m.workspace_id, m.version, m.stream_revision::text AS revision, m.member_role_id AS "roleId"),
   versions AS (${bumpListVersions('changed')})
   SELECT id, version, revision, "roleId", ${LIST_VERSION_COLUMNS} FROM changed`;

interface ChangedRow extends ListVersionRow {
  id: number;
  version: number;
  revision: string;
  roleId: number;
}

type Handled = AccountRegistered | AccountUpdated | MemberEvent | MemberRolesMerged | MemberTokenEvent;

const MEMBER_COLUMNS: Record<keyof MemberChanges, string> = {
  name: 'name',
  email: 'email',
  phone: 'phone',
  externalId: 'external_id',
  memberRoleId: 'member_role_id',
  notifySms: 'notify_sms',
  notifyEmail: 'notify_email',
  notifyVoice: 'notify_voice',
  timezone: 'timezone',
  agentModel: 'agent_model',
  agentInstructions: 'agent_instructions',
};

/** Column types, for a run of MemberUpdated written in one UPDATE ... FROM jsonb_to_recordset. */
const MEMBER_TYPES: Record<keyof MemberChanges, string> = {
  name: 'text',
  email: 'text',
  phone: 'text',
  externalId: 'text',
  memberRoleId: 'integer',
  notifySms: 'boolean',
  notifyEmail: 'boolean',
  notifyVoice: 'boolean',
  timezone: 'text',
  agentModel: 'text',
  agentInstructions: 'text',
};

function changedFields(e: StoredEvent): (keyof MemberChanges)[] {
  const d = e.data as { changes: MemberChanges };
  return (Object.keys(d.changes) as (keyof MemberChanges)[]).filter((f) => MEMBER_COLUMNS[f]).sort();
}

/**
 * Accounts, members and member tokens. MemberUpdated writes only the changed columns, so a
 * role merge projected in between is never overwritten by an older snapshot. Member tokens
 * had a projection of their own (`member-tokens`) until migration 1764000010320: a signup's
 * three events then cost two transactions where one does.
 */
@Injectable()
@Projection({
  name: 'members',
  eventTypes: [
    'AccountRegistered',
    'AccountUpdated',
    'MemberCreated',
    'MemberUpdated',
    'MemberArchived',
    'MemberAccountLinked',
    'MemberTokensRevoked',
    'MemberRolesMerged',
    'MemberWriteFenced',
    CLAIM_FENCED,
    'MemberTokenIssued',
    'MemberTokenRevoked',
    'MemberTokenExpired',
  ],
  tables: ['accounts', 'members', 'member_counts', 'member_list_versions', 'member_tokens'],
})
export class MembersProjection implements ProjectionHandler {
  constructor(
    private readonly versions: MemberVersions = new MemberVersions(),
    /** Absent only where a spec builds the projection without Redis: no list version is announced. */
    @Optional() private readonly lists?: MemberListAnnouncer,
  ) {}

  /** Runs a statement of `updatingListVersions`, recording the versions of the rows it changed. */
  private async changing(em: EntityManager, sql: string, params: unknown[]): Promise<void> {
    // Named: a run of edits is one statement of a few shapes, planned once per connection.
    const rows = await queryPreparedIn<ChangedRow>(em, sql, params);
    for (const r of rows) this.versions.seen(r.id, r.revision, r.version, r.roleId);
    await this.announce(rows);
  }

  /**
   * Before the commit of the statement's list versions (this transaction's): a kept page of
   * those lists is served by no process once the change is visible (MemberListAnnouncer).
   */
  private async announce(rows: readonly ListVersionRow[]): Promise<void> {
    if (this.lists && rows.length) await this.lists.announce(rows);
  }

  /**
   * Runs of MemberCreated (bulk import) go in one multi-row insert, and a run of
   * MemberUpdated (edits, of one member or many) in one UPDATE per set of changed fields,
   * each member's events of the run folded into one row first (see `updated`);
   * AccountRegistered of distinct accounts and MemberTokenIssued, gathered across the
   * MemberCreated between them (a signup appends the three in turn; they write different
   * tables, so their order between each other does not matter), go in the same statement
   * as those members (`inserted`); the rest one by one, in order.
   */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    let created: StoredEvent[] = [];
    let updated: StoredEvent[] = [];
    let registered: StoredEvent[] = [];
    let issued: StoredEvent[] = [];
    const registeredIds = new Set<string>();
    const flush = async () => {
      if (updated.length) await this.updated(updated, em);
      else await this.inserted(created, registered, issued, em);
      created = [];
      updated = [];
      registered = [];
      issued = [];
      registeredIds.clear();
    };
    for (const e of events) {
      if (e.type === 'MemberCreated' || e.type === 'MemberTokenIssued') {
        if (updated.length) await flush();
        (e.type === 'MemberCreated' ? created : issued).push(e);
        continue;
      }
      if (e.type === 'AccountRegistered') {
        const id = (e.data as AccountRegistered['data']).accountUuid;
        // One upsert cannot touch a row twice: a second registration of an account waits.
        if (updated.length || registeredIds.has(id)) await flush();
        registered.push(e);
        registeredIds.add(id);
        continue;
      }
      if (e.type === 'MemberUpdated') {
        if (created.length || registered.length || issued.length) await flush();
        updated.push(e);
        continue;
      }
      await flush();
      await this.handle(e, em);
    }
    await flush();
  }

  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    if (stored.type === CLAIM_FENCED) {
      // A claim takeover's fence on a member stream (core/claims): like MemberWriteFenced,
      // it moves the stream on and changes nothing shown. Fences of other streams are not ours.
      if (stored.streamName.startsWith('member-')) {
        const memberId = memberIdOf(stored.streamName);
        this.versions.forget(memberId);
        await em.query(`UPDATE members SET stream_revision = $2 WHERE id = $1`, [
          memberId,
          stored.revision.toString(),
        ]);
      }
      return;
    }
    const event = { type: stored.type, data: stored.data } as Handled;
    switch (event.type) {
      case 'AccountRegistered':
        return this.inserted([], [stored], [], em);
      case 'MemberTokenIssued':
        return this.inserted([], [], [stored], em);
      case 'MemberTokenRevoked':
        await em.query(`UPDATE member_tokens SET revoked_at = $2 WHERE id = $1`, [
          event.data.tokenId,
          event.data.revokedAt,
        ]);
        return;
      case 'MemberTokenExpired':
        await em.query(`UPDATE member_tokens SET expired_at = $2 WHERE id = $1`, [
          event.data.tokenId,
          event.data.expiredAt,
        ]);
        return;
      case 'AccountUpdated': {
        const d = event.data;
        const sets = (['email', 'phone', 'name'] as const).filter((f) => d.changes[f] !== undefined);
        await em.query(
          `UPDATE accounts SET ${sets
            .map((f, i) => `${f} = $${i + 3}`)
            .concat('updated_at = $2')
            // Only the email the account was registered with is proven (AccountState.emailVerified).
            .concat(
              sets.includes('email')
                ? [
                    `email_verified = (registered_email IS NOT NULL AND registered_email = $${sets.indexOf('email') + 3})`,
                  ]
                : [],
            )
            .join(', ')} WHERE uuid = $1`,
          [d.accountUuid, d.updatedAt, ...sets.map((f) => d.changes[f])],
        );
        return;
      }
      case 'MemberCreated':
        return this.inserted([stored], [], [], em);
      case 'MemberUpdated': {
        const d = event.data;
        // In one order, so that a set of changed fields is one statement text (changing names it).
        const fields = changedFields(stored);
        await this.changing(
          em,
          updatingListVersions(
            `UPDATE members m SET ${fields
              .map((f, i) => `${MEMBER_COLUMNS[f]} = $${i + 4}`)
              .concat('updated_at = $2', `${CHANGED} = $3`)
              .join(', ')} WHERE id = $1`,
          ),
          [d.memberId, d.updatedAt, stored.revision.toString(), ...fields.map((f) => d.changes[f])],
        );
        return;
      }
      case 'MemberArchived':
        this.versions.forget(event.data.memberId);
        // The counts move with the row, from the status it had (an archived member stays archived).
        await this.announce(
          (await em.query(
            `WITH archived AS (
               UPDATE members m SET status = 'archived', archived_at = $2, updated_at = $2, ${CHANGED} = $3
                 FROM (SELECT id, status FROM members WHERE id = $1 FOR UPDATE) was
                WHERE m.id = was.id RETURNING m.workspace_id, was.status AS was),
             versions AS (${bumpListVersions('archived')}),
             counts AS (
               INSERT INTO member_counts (workspace_id, status, members)
               SELECT workspace_id, s.status, s.delta FROM archived,
                      (VALUES ('active', -1), ('archived', 1)) AS s(status, delta)
                WHERE archived.was = 'active'
               ON CONFLICT (workspace_id, status) DO UPDATE SET members = member_counts.members + EXCLUDED.members)
             SELECT ${LIST_VERSION_COLUMNS} FROM archived`,
            [event.data.memberId, event.data.archivedAt, stored.revision.toString()],
          )) as ListVersionRow[],
        );
        return;
      case 'MemberAccountLinked':
        await this.changing(
          em,
          updatingListVersions(
            `UPDATE members m SET account_uuid = $2, updated_at = $3, ${CHANGED} = $4 WHERE id = $1`,
          ),
          [event.data.memberId, event.data.accountUuid, event.data.linkedAt, stored.revision.toString()],
        );
        return;
      case 'MemberTokensRevoked':
        // Not shown in the member's representation: the version stays, the stream revision moves.
        this.versions.forget(event.data.memberId);
        await em.query(`UPDATE members SET tokens_revoked_before = $2, stream_revision = $3 WHERE id = $1`, [
          event.data.memberId,
          event.data.revokedBefore,
          stored.revision.toString(),
        ]);
        return;
      case 'MemberRolesMerged': {
        const d = event.data;
        await this.changing(
          em,
          updatingListVersions(
            `UPDATE members m SET member_role_id = $3, version = version + 1
             WHERE workspace_id = $1 AND (id = ANY($4::int[]) OR member_role_id = $2)`,
          ),
          [d.workspaceId, d.sourceRoleId, d.targetRoleId, d.memberIds],
        );
        return;
      }
      case 'MemberWriteFenced':
        // A fence moves the stream on (an If-Match write must append after it), nothing shown changes.
        this.versions.forget(event.data.memberId);
        await em.query(`UPDATE members SET stream_revision = $2 WHERE id = $1`, [
          event.data.memberId,
          stored.revision.toString(),
        ]);
        return;
    }
  }

  /**
   * A run of MemberUpdated (nothing else of this projection's between them), as `handle`
   * would write them one by one: each member's events fold into one row (each column the
   * last value the run gives it, updated_at and stream_revision the last event's, version
   * up by the number of events: one per change shown, as one by one), then one UPDATE per
   * set of changed columns. A member updated 500 times in a batch is one row of one statement.
   * No status changes, so member_counts stays as it is.
   */
  private async updated(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    if (events.length === 1) return this.handle(events[0], em);
    const folded = new Map<
      number,
      { changes: Partial<MemberChanges>; events: number; updatedAt: string; streamRevision: string }
    >();
    for (const e of events) {
      const d = e.data as { memberId: number; updatedAt: string; changes: MemberChanges };
      let row = folded.get(d.memberId);
      if (!row) folded.set(d.memberId, (row = { changes: {}, events: 0, updatedAt: '', streamRevision: '' }));
      for (const f of changedFields(e)) (row.changes as Record<string, unknown>)[f] = d.changes[f];
      row.events++;
      row.updatedAt = d.updatedAt;
      row.streamRevision = e.revision.toString();
    }
    const byFields = new Map<string, { fields: (keyof MemberChanges)[]; rows: Record<string, unknown>[] }>();
    for (const [memberId, m] of folded) {
      const fields = (Object.keys(m.changes) as (keyof MemberChanges)[]).sort();
      const key = fields.join(',');
      let group = byFields.get(key);
      if (!group) byFields.set(key, (group = { fields, rows: [] }));
      const row: Record<string, unknown> = {
        memberId,
        events: m.events,
        updatedAt: m.updatedAt,
        streamRevision: m.streamRevision,
      };
      fields.forEach((f, i) => (row[`v${i}`] = m.changes[f]));
      group.rows.push(row);
    }
    for (const { fields, rows } of byFields.values()) {
      const set = fields
        .map((f, i) => `${MEMBER_COLUMNS[f]} = r.v${i}`)
        .concat(
          'updated_at = r."updatedAt"',
          'version = m.version + r.events',
          'stream_revision = r."streamRevision"',
        )
        .join(', ');
      const columns = [
        '"memberId" integer',
        'events integer',
        '"updatedAt" timestamptz',
        '"streamRevision" bigint',
      ]
        .concat(fields.map((f, i) => `v${i} ${MEMBER_TYPES[f]}`))
        .join(', ');
      await this.changing(
        em,
        updatingListVersions(
          `UPDATE members m SET ${set} FROM jsonb_to_recordset($1::jsonb) AS r(${columns}) WHERE m.id = r."memberId"`,
        ),
        [JSON.stringify(rows)],
      );
    }
  }

  /**
   * New rows in one statement: MemberCreated events in one multi-row insert, and with them
   * (as more CTEs of the same statement) the upsert of AccountRegistered (of distinct
   * accounts) and the insert of MemberTokenIssued. Nothing when all three are empty.
   */
  private async inserted(
    created: readonly StoredEvent[],
    registered: readonly StoredEvent[],
    issued: readonly StoredEvent[],
    em: EntityManager,
  ): Promise<void> {
    const params: string[] = [];
    const param = (value: string) => `$${params.push(value)}`;
    const writes: string[] = [];
    if (registered.length) writes.push(upsertAccounts(param(accountRows(registered))));
    if (issued.length) writes.push(insertTokens(param(tokenRows(issued))));
    if (!created.length) {
      if (!writes.length) return;
      const last = writes.pop()!;
      const ctes = writes.map((w, i) => `w${i} AS (${w})`);
      await em.query(ctes.length ? `WITH ${ctes.join(', ')} ${last}` : last, params);
      return;
    }
    const rows = created.map((e) => ({
      ...(e.data as MemberCreated['data']),
      streamRevision: e.revision.toString(),
    }));
    const members = param(JSON.stringify(rows));
    const ctes = writes.map((w, i) => `w${i} AS (${w}),`).join(' ');
    // The counts grow by the rows inserted (none for a member already there).
    const lists = (await em.query(
      `WITH ${ctes} inserted AS (
       INSERT INTO members (id, workspace_id, account_uuid, email, phone, name, external_id, member_role_id, kind, status,
                            notify_sms, notify_email, notify_voice, agent_model, agent_instructions,
                            created_at, updated_at, version, stream_revision)
       SELECT r."memberId", r."workspaceId", r."accountUuid", r.email, r.phone, r.name, r."externalId", r."memberRoleId",
              r.kind, 'active', r."notifySms", r."notifyEmail", r."notifyVoice", r."agentModel", r."agentInstructions",
              r."createdAt", r."createdAt", 1, r."streamRevision"
       FROM jsonb_to_recordset(${members}::jsonb) AS r("memberId" integer, "workspaceId" uuid, "accountUuid" uuid, email text,
            phone text, name text, "externalId" text, "memberRoleId" integer, kind text, "notifySms" boolean,
            "notifyEmail" boolean, "notifyVoice" boolean, "agentModel" text, "agentInstructions" text,
            "createdAt" timestamptz, "streamRevision" bigint)
       ON CONFLICT (id) DO NOTHING
       RETURNING workspace_id, status),
       versions AS (${bumpListVersions('inserted')}),
       counts AS (
       INSERT INTO member_counts (workspace_id, status, members)
       SELECT workspace_id, status, count(*) FROM inserted GROUP BY workspace_id, status
       ON CONFLICT (workspace_id, status) DO UPDATE SET members = member_counts.members + EXCLUDED.members)
       SELECT DISTINCT ${LIST_VERSION_COLUMNS} FROM inserted`,
      params,
    )) as ListVersionRow[];
    await this.announce(lists);
  }
}

/** The upsert of AccountRegistered rows (`accountRows`) given as the jsonb parameter `param`. */
function upsertAccounts(param: string): string {
  return `INSERT INTO accounts (uuid, email, registered_email, phone, name, created_at, updated_at)
       SELECT r."accountUuid", r.email, r.email, r.phone, r.name, r."createdAt", r."createdAt"
       FROM jsonb_to_recordset(${param}::jsonb) AS r("accountUuid" uuid, email text, phone text, name text,
            "createdAt" timestamptz)
       ON CONFLICT (uuid) DO UPDATE SET email = excluded.email, registered_email = excluded.email,
         phone = excluded.phone, name = excluded.name, email_verified = true`;
}

/** The insert of MemberTokenIssued rows (`tokenRows`) given as the jsonb parameter `param`. */
function insertTokens(param: string): string {
  return `INSERT INTO member_tokens (id, prefix, secret_hash, workspace_id, member_id, account_uuid, created_at, expires_at)
       SELECT r.id, r.prefix, r."secretHash", r."workspaceId", r."memberId", r."accountUuid", r."issuedAt", r."expiresAt"
       FROM jsonb_to_recordset(${param}::jsonb) AS r(id uuid, prefix text, "secretHash" text, "workspaceId" uuid,
            "memberId" integer, "accountUuid" uuid, "issuedAt" timestamptz, "expiresAt" timestamptz)
       ON CONFLICT (id) DO NOTHING`;
}

function tokenRows(events: readonly StoredEvent[]): string {
  return JSON.stringify(
    events.map((e) => {
      const d = e.data as Extract<MemberTokenEvent, { type: 'MemberTokenIssued' }>['data'];
      return {
        id: d.tokenId,
        prefix: d.prefix,
        secretHash: d.secretHash,
        workspaceId: d.workspaceId,
        memberId: d.memberId,
        accountUuid: d.accountUuid,
        issuedAt: d.issuedAt,
        expiresAt: d.expiresAt,
      };
    }),
  );
}

function accountRows(events: readonly StoredEvent[]): string {
  return JSON.stringify(
    events.map((e) => {
      const d = e.data as AccountRegistered['data'];
      return {
        accountUuid: d.accountUuid,
        email: d.email,
        phone: d.phone,
        name: d.name,
        createdAt: d.createdAt,
      };
    }),
  );
}
