import { useReadModelDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import type { MemberChanges } from '../domain/member.events';
import { MembersProjection } from './members.projection';

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

  it('ends each member as the events one by one do, with a statement per column set, not per event', async () => {
    await scratch.ds.transaction(async (em) => {
      for (const id of [1, 2, 11, 12]) await projection.handle(created(id), em);
      for (const e of edits(1, 2)) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch(edits(11, 12), em);
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
    expect(statements.filter((s) => s.startsWith('UPDATE members'))).toHaveLength(2);
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
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements++;
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch([...run, archived, after], em);
    });
    expect(statements).toBe(3);
    const [row] = (await scratch.ds.query(
      `SELECT name, status, version, stream_revision::text AS rev FROM members WHERE id = 21`,
    )) as Record<string, unknown>[];
    expect(row).toEqual({ name: 'After archive', status: 'archived', version: 303, rev: '302' });
  });
});
