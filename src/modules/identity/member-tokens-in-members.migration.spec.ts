import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { createDataSource } from '../../core/database/data-source';
import { PostgresEventStore } from '../../core/event-store/postgres/postgres-event-store';
import type { Position } from '../../core/event-store/event-store.port';
import { meta } from '../../core/event-store/testing/event-store.test-helpers';
import { MemberTokensInMembers1764000010320 } from './member-tokens-in-members.migration';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
const account = '0190a6c4-0000-7000-9000-000000000001';
const token = (n: number) => `0190a6c4-0000-7000-a000-${String(n).padStart(12, '0')}`;

describe('MemberTokensInMembers1764000010320', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let store: PostgresEventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
    await ds.initialize();
    store = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
  });
  afterAll(async () => {
    await store?.close();
    await ds?.destroy();
    await db?.drop();
  });

  const append = async (type: string, n: number, data: object): Promise<Position> =>
    (
      await store.append(`member-token-${token(n)}`, [
        { type, data: { tokenId: token(n), ...data }, metadata: meta() },
      ])
    ).position;
  const issue = (n: number) =>
    append('MemberTokenIssued', n, {
      workspaceId: ws,
      memberId: n,
      accountUuid: account,
      prefix: `wsm_p${n}`,
      secretHash: `hash-${n}`,
      issuedAt: '2026-11-23T10:00:00.000Z',
      expiresAt: '2026-12-23T10:00:00.000Z',
    });
  const checkpoint = (name: string, at: Position) =>
    ds.query(
      `INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare) VALUES ($1, 'projection', $2, $3)
       ON CONFLICT (name) DO UPDATE SET position_commit = $2, position_prepare = $3`,
      [name, at.commit.toString(), at.prepare.toString()],
    );
  const tokens = async () =>
    (await ds.query(
      `SELECT member_id, prefix, secret_hash, revoked_at IS NOT NULL AS revoked, expired_at IS NOT NULL AS expired
         FROM member_tokens ORDER BY member_id`,
    )) as Record<string, unknown>[];

  it('applies the token events the members projection passed and member-tokens had not; those after it are left to it', async () => {
    // member-tokens applied token 1 (its row is there); members has passed tokens 1-3 and 2's revocation.
    const first = await issue(1);
    await ds.query(
      `INSERT INTO member_tokens (id, prefix, secret_hash, workspace_id, member_id, account_uuid, created_at, expires_at)
       VALUES ($1, 'wsm_p1', 'hash-1', $2, 1, $3, '2026-11-23T10:00:00Z', '2026-12-23T10:00:00Z')`,
      [token(1), ws, account],
    );
    await checkpoint('member-tokens', first);
    await issue(2);
    await issue(3);
    const revoked = await append('MemberTokenRevoked', 2, { revokedAt: '2026-11-23T11:00:00.000Z' });
    await append('MemberTokenExpired', 3, { expiredAt: '2026-11-23T12:00:00.000Z' });
    await checkpoint('members', revoked);
    // Past the members checkpoint: the members projection applies them itself.
    await issue(4);

    const runner = ds.createQueryRunner();
    try {
      await new MemberTokensInMembers1764000010320().up(runner);
      // Again: changes nothing.
      await new MemberTokensInMembers1764000010320().up(runner);
    } finally {
      await runner.release();
    }
    expect(await tokens()).toEqual([
      { member_id: 1, prefix: 'wsm_p1', secret_hash: 'hash-1', revoked: false, expired: false },
      { member_id: 2, prefix: 'wsm_p2', secret_hash: 'hash-2', revoked: true, expired: false },
      { member_id: 3, prefix: 'wsm_p3', secret_hash: 'hash-3', revoked: false, expired: false },
    ]);
    expect(
      await ds.query(`SELECT name FROM subscriber_checkpoints WHERE name IN ('members', 'member-tokens')`),
    ).toEqual([{ name: 'members' }]);
  });
});
