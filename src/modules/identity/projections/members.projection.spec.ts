import Redis from 'ioredis';
import type { EntityManager } from 'typeorm';
import { useReadModelDatabase } from '../../../../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../../../../test/support/redis';
import { ENTITIES } from '../../../app.entities';
import type { AppConfig } from '../../../core/config/config';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import type { MemberChanges } from '../domain/member.events';
import { MembersProjection } from './members.projection';
import { MemberVersions } from './member-versions';
import { MemberListAnnouncer } from './member-list-announcer';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
let seq = 0;
const stored = (type: string, data: unknown, memberId: number, revision: number): StoredEvent => ({
  id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  type,
  data,
  metadata: meta(),
  streamName: `member-${memberId}`,
  revision: BigInt(revision),
  position: { commit: 1n, prepare: BigInt(seq) },
});

const created = (memberId: number): StoredEvent =>
  stored(
    'MemberCreated',
    {
      memberId,
      workspaceId: ws,
      accountUuid: null,
      email: 'm@example.com',
      phone: null,
      name: `Member ${memberId}`,
      externalId: null,
      memberRoleId: 1,
      kind: 'human',
      notifySms: false,
      notifyEmail: true,
      notifyVoice: false,
      createdAt: '2026-11-23T10:00:00.000Z',
    },
    memberId,
    0,
  );

const updated = (memberId: number, revision: number, changes: MemberChanges, minute: number): StoredEvent =>
  stored(
    'MemberUpdated',
    {
      memberId,
      workspaceId: ws,
      changes,
      updatedAt: `2026-11-23T10:${String(minute).padStart(2, '0')}:00.000Z`,
    },
    memberId,
    revision,
  );

/** Edits of two members, interleaved, several of each, changing different fields. */
function edits(a: number, b: number): StoredEvent[] {
  return [
    updated(a, 1, { name: 'A one' }, 1),
    updated(b, 1, { name: 'B one', phone: '+15550000001' }, 2),
    updated(a, 2, { email: 'a2@example.com', notifySms: true }, 3),
    updated(a, 3, { name: 'A three', timezone: 'Europe/Paris' }, 4),
    updated(b, 2, { phone: null, memberRoleId: 2 }, 5),
    updated(a, 4, { notifySms: false }, 6),
    updated(b, 3, { name: 'B three' }, 7),
  ];
}

/**
 * The batch path folds a run of MemberUpdated per member into one row per member and one
 * UPDATE per set of changed columns: the rows must end exactly as when each event is
 * applied on its own, in order (values, updated_at, version, stream_revision, counts).
 */
describe('MembersProjection: a run of MemberUpdated in one batch', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new MembersProjection();

  const rows = async (ids: number[]) =>
    (await scratch.ds.query(
      `SELECT name, email, phone, member_role_id, notify_sms, notify_email, timezone,
              updated_at, version, stream_revision::text AS rev
         FROM members WHERE id = ANY($1::int[]) ORDER BY id`,
      [ids],
    )) as Record<string, unknown>[];

  /**
   * Calls `seen` with the text of every statement sent on the transaction's connection
   * (the projection sends some as named statements on the client, past `em.query`).
   */
  function onStatements(em: EntityManager, seen: (sql: string) => void): () => void {
    const client = (
      em.queryRunner as unknown as { databaseConnection: { query: (...a: unknown[]) => unknown } }
    ).databaseConnection;
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      const q = args[0] as string | { text: string };
      seen(typeof q === 'string' ? q : q.text);
      return query(...args);
    };
    return () => delete (client as { query?: unknown }).query;
  }

  it('ends each member as the events one by one do, with a statement per column set, not per event', async () => {
    await scratch.ds.transaction(async (em) => {
      for (const id of [1, 2, 11, 12]) await projection.handle(created(id), em);
      for (const e of edits(1, 2)) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const restore = onStatements(em, (sql) => statements.push(sql));
      await projection.handleBatch(edits(11, 12), em);
      restore();
    });

    const oneByOne = await rows([1, 2]);
    const batched = await rows([11, 12]);
    expect(batched).toEqual(oneByOne);
    expect(oneByOne[0]).toMatchObject({
      name: 'A three',
      email: 'a2@example.com',
      notify_sms: false,
      timezone: 'Europe/Paris',
      version: 5,
      rev: '4',
    });
    expect(oneByOne[1]).toMatchObject({
      name: 'B three',
      phone: null,
      member_role_id: 2,
      version: 4,
      rev: '3',
    });
    expect((oneByOne[1].updated_at as Date).toISOString()).toBe('2026-11-23T10:07:00.000Z');
    // Member 11 folds to {email, name, notifySms, timezone}, 12 to {memberRoleId, name, phone}.
    expect(statements.filter((s) => s.includes('UPDATE members'))).toHaveLength(2);
    expect(
      await scratch.ds.query(`SELECT status, members FROM member_counts WHERE workspace_id = $1`, [ws]),
    ).toEqual([{ status: 'active', members: 4 }]);
  });

  it('applies a long run of one member in one statement, and stops the run at other events', async () => {
    await scratch.ds.transaction(async (em) => projection.handle(created(21), em));
    const run = Array.from({ length: 300 }, (_, i) => updated(21, i + 1, { name: `Name ${i + 1}` }, i % 60));
    const archived = stored(
      'MemberArchived',
      { memberId: 21, workspaceId: ws, member: {}, archivedAt: '2026-11-23T11:00:00.000Z' },
      21,
      301,
    );
    const after = updated(21, 302, { name: 'After archive' }, 59);
    let statements = 0;
    await scratch.ds.transaction(async (em) => {
      const restore = onStatements(em, () => statements++);
      await projection.handleBatch([...run, archived, after], em);
      restore();
    });
    expect(statements).toBe(3);
    const [row] = (await scratch.ds.query(
      `SELECT name, status, version, stream_revision::text AS rev FROM members WHERE id = 21`,
    )) as Record<string, unknown>[];
    expect(row).toEqual({ name: 'After archive', status: 'archived', version: 303, rev: '302' });
  });
});

/**
 * MemberVersions (what a member PUT answers its ETag from): after each statement the
 * projection runs, a member it knows at a stream revision is at exactly the row's version
 * and revision; a change it does not record (archive, token revocation) makes it forget.
 */
describe('MembersProjection: the versions it records', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const versions = new MemberVersions();
  const projection = new MembersProjection(versions);

  const row = async (id: number) =>
    (
      (await scratch.ds.query(
        `SELECT version, stream_revision::text AS rev, member_role_id AS role FROM members WHERE id = $1`,
        [id],
      )) as { version: number; rev: string; role: number }[]
    )[0];

  it("one by one, in a batch, and across a role merge: the recorded version is the row's", async () => {
    await scratch.ds.transaction(async (em) => {
      for (const id of [31, 32, 41, 42]) await projection.handle(created(id), em);
      for (const e of edits(31, 32)) await projection.handle(e, em);
      await projection.handleBatch(edits(41, 42), em);
    });
    for (const id of [31, 32, 41, 42]) {
      const r = await row(id);
      expect(versions.versionAt(id, BigInt(r.rev), r.role)).toBe(r.version);
      expect(versions.versionAt(id, BigInt(r.rev) - 1n, r.role)).toBeUndefined();
    }
    // A merge moves 32 and 42 (role 2) without moving their streams: the versions follow,
    // and a member decided on the role it had before (a PUT racing the merge) gets none.
    const merged: StoredEvent = {
      ...stored(
        'MemberRolesMerged',
        { workspaceId: ws, sourceRoleId: 2, targetRoleId: 3, memberIds: [] },
        0,
        0,
      ),
      streamName: 'member-role-2',
    };
    await scratch.ds.transaction(async (em) => projection.handle(merged, em));
    const r42 = await row(42);
    expect(r42).toMatchObject({ version: 5, role: 3 });
    expect(versions.versionAt(42, BigInt(r42.rev), 3)).toBe(5);
    expect(versions.versionAt(42, BigInt(r42.rev), 2)).toBeUndefined();
    expect(versions.versionAt(41, 4n, 1)).toBe(5);

    // Changes shown or not, that the projection does not record: forgotten.
    const revoked = stored(
      'MemberTokensRevoked',
      { memberId: 31, workspaceId: ws, revokedBefore: '2026-11-23T11:00:00.000Z' },
      31,
      5,
    );
    const archived = stored(
      'MemberArchived',
      { memberId: 41, workspaceId: ws, member: {}, archivedAt: '2026-11-23T11:00:00.000Z' },
      41,
      5,
    );
    await scratch.ds.transaction(async (em) => projection.handleBatch([revoked, archived], em));
    expect(versions.versionAt(31, 4n, 1)).toBeUndefined();
    expect(versions.versionAt(31, 5n, 1)).toBeUndefined();
    expect(versions.versionAt(41, 5n, 1)).toBeUndefined();
  });
});

/** Signups append MemberCreated, AccountRegistered and MemberTokenIssued in turn: a batch of them is one statement. */
describe('MembersProjection: a run of signups in one batch', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new MembersProjection();
  const account = (n: number) => `0190a6c4-0000-7000-9000-${String(n).padStart(12, '0')}`;
  const registered = (n: number): StoredEvent => ({
    ...stored(
      'AccountRegistered',
      {
        accountUuid: account(n),
        email: `s${n}@example.com`,
        phone: null,
        name: `Signup ${n}`,
        createdAt: '2026-11-23T10:00:00.000Z',
      },
      n,
      0,
    ),
    streamName: `account-${account(n)}`,
  });
  const token = (n: number) => `0190a6c4-0000-7000-a000-${String(n).padStart(12, '0')}`;
  const issued = (n: number): StoredEvent => ({
    ...stored(
      'MemberTokenIssued',
      {
        tokenId: token(n),
        workspaceId: ws,
        memberId: n,
        accountUuid: account(n),
        prefix: `wsm_p${n}`,
        secretHash: `hash-${n}`,
        issuedAt: '2026-11-23T10:00:00.000Z',
        expiresAt: '2026-12-23T10:00:00.000Z',
      },
      n,
      0,
    ),
    streamName: `member-token-${token(n)}`,
  });
  const signup = (n: number): StoredEvent[] => [
    { ...created(n), data: { ...(created(n).data as object), accountUuid: account(n) } },
    registered(n),
    issued(n),
  ];
  const state = async (ids: number[]) => ({
    members: (await scratch.ds.query(
      `SELECT id - $2::int AS n, account_uuid, name IS NOT NULL AS named, version, stream_revision::text AS rev
         FROM members WHERE id = ANY($1::int[]) ORDER BY id`,
      [ids, ids[0]],
    )) as Record<string, unknown>[],
    accounts: (await scratch.ds.query(
      `SELECT email, registered_email, phone, name, email_verified, created_at
         FROM accounts WHERE uuid = ANY($1::uuid[]) ORDER BY uuid`,
      [ids.map(account)],
    )) as Record<string, unknown>[],
    tokens: (await scratch.ds.query(
      `SELECT member_id - $2::int AS n, prefix IS NOT NULL AS prefixed, workspace_id, created_at, expires_at,
              revoked_at, expired_at
         FROM member_tokens WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids.map(token), ids[0]],
    )) as Record<string, unknown>[],
  });

  it('writes the members, their accounts and tokens as the events one by one do, in one statement', async () => {
    await scratch.ds.transaction(async (em) => {
      for (const e of [1, 2, 3].flatMap(signup)) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch([11, 12, 13].flatMap(signup), em);
    });
    expect(statements).toHaveLength(1);
    const oneByOne = await state([1, 2, 3]);
    const batched = await state([11, 12, 13]);
    expect(batched.members.map((m) => ({ ...m, account_uuid: null }))).toEqual(
      oneByOne.members.map((m) => ({ ...m, account_uuid: null })),
    );
    expect(batched.members.map((m) => m.account_uuid)).toEqual([11, 12, 13].map(account));
    expect(batched.accounts.map((a) => a.email)).toEqual([
      's11@example.com',
      's12@example.com',
      's13@example.com',
    ]);
    expect(batched.accounts[0]).toMatchObject({ registered_email: 's11@example.com', email_verified: true });
    expect(oneByOne.accounts).toHaveLength(3);
    expect(oneByOne.tokens).toHaveLength(3);
    expect(batched.tokens).toEqual(oneByOne.tokens);
    expect(
      await scratch.ds.query(`SELECT prefix, secret_hash, account_uuid FROM member_tokens WHERE id = $1`, [
        token(12),
      ]),
    ).toEqual([{ prefix: 'wsm_p12', secret_hash: 'hash-12', account_uuid: account(12) }]);
    expect(
      await scratch.ds.query(`SELECT status, members FROM member_counts WHERE workspace_id = $1`, [ws]),
    ).toEqual([{ status: 'active', members: 6 }]);
  });
});

/**
 * The member list's version of a workspace (member_list_versions) moves in the transaction
 * of every change a list can show, on the single and the batch path alike: a process
 * serves a kept page only while it is unchanged (queries/member-list.cache.ts).
 */
describe('MembersProjection: the member list version', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
  const redisPrefix = testRedisPrefix();
  const projection = new MembersProjection(
    new MemberVersions(),
    new MemberListAnnouncer(redis, { redisPrefix } as AppConfig),
  );
  const other = '0b9d8f2e-5a4c-4d3b-8e1f-7c6b5a493827';

  afterAll(async () => {
    redis.disconnect();
    await clearRedisPrefix(redisPrefix);
  });

  /** What the projection announced for the workspace's list (core/http/kept-reads.ts). */
  const announced = (workspaceId = ws) => redis.get(`${redisPrefix}:read-version:member-list:${workspaceId}`);

  const version = async (workspaceId = ws): Promise<string | null> => {
    const rows = (await scratch.ds.query(
      `SELECT version::text AS version FROM member_list_versions WHERE workspace_id = $1`,
      [workspaceId],
    )) as { version: string }[];
    return rows[0]?.version ?? null;
  };

  /** Applies `events` in one transaction; the versions of `ws` and `other` before and after. */
  const apply = async (events: StoredEvent[], batch = true) => {
    const before = [await version(), await version(other)];
    await scratch.ds.transaction(async (em) => {
      if (batch) await projection.handleBatch(events, em);
      else for (const e of events) await projection.handle(e, em);
    });
    return { before, after: [await version(), await version(other)] };
  };

  it('moves with every change a list shows, in its workspace only', async () => {
    const elsewhere = { ...created(39), data: { ...(created(39).data as object), workspaceId: other } };
    const first = await apply([created(31), created(32), elsewhere]);
    expect(first.before).toEqual([null, null]);
    expect(first.after[0]).toMatch(/^\d+$/);
    expect(first.after[1]).toMatch(/^\d+$/);
    // Each version is announced as written (before its commit), for its workspace only.
    expect([await announced(), await announced(other)]).toEqual(first.after);

    const moved = async (events: StoredEvent[], batch = true) => {
      const { before, after } = await apply(events, batch);
      expect(after[0]).not.toBe(before[0]);
      expect(after[1]).toBe(before[1]);
      expect([await announced(), await announced(other)]).toEqual(after);
    };
    await moved([updated(31, 1, { name: 'One' }, 1)], false);
    await moved([updated(31, 2, { name: 'Two' }, 2), updated(32, 1, { phone: '+15550000002' }, 3)]);
    await moved([
      stored(
        'MemberAccountLinked',
        {
          memberId: 31,
          workspaceId: ws,
          accountUuid: '3f0a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b',
          linkedAt: '2026-11-23T10:10:00.000Z',
        },
        31,
        3,
      ),
    ]);
    await moved([
      stored(
        'MemberRolesMerged',
        {
          workspaceId: ws,
          sourceRoleId: 1,
          targetRoleId: 2,
          resourceAccess: 'discard',
          memberIds: [31, 32],
          invitationIds: [],
          workspaceDefaultMoved: false,
        },
        31,
        4,
      ),
    ]);
    await moved([
      stored(
        'MemberArchived',
        { memberId: 32, workspaceId: ws, member: {}, archivedAt: '2026-11-23T11:00:00.000Z' },
        32,
        2,
      ),
    ]);
    await moved([created(33)]);

    // Nothing a list shows: the version stays.
    const revoked = await apply([
      stored(
        'MemberTokensRevoked',
        { memberId: 31, workspaceId: ws, revokedBefore: '2026-11-23T12:00:00.000Z' },
        31,
        5,
      ),
    ]);
    expect(revoked.after).toEqual(revoked.before);
    expect(await announced()).toBe(revoked.after[0]);
  });
});
