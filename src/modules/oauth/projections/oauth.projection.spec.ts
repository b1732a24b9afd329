import { useReadModelDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { OAuthProjection } from './oauth.projection';

let seq = 0;
const stored = (type: string, data: unknown): StoredEvent => ({
  id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  type,
  data,
  metadata: meta(),
  streamName: `account-${seq}`,
  revision: 0n,
  position: { commit: 1n, prepare: BigInt(seq) },
});

const account = (n: number) => `6f0c1f9e-3c1a-4b8e-9d57-${String(n).padStart(12, '0')}`;
const registered = (n: number, email: string | null, minute = n % 100) =>
  stored('AccountRegistered', {
    accountUuid: account(n),
    email,
    phone: email ? null : '+15550000000',
    name: null,
    createdAt: `2026-11-23T10:${String(minute).padStart(2, '0')}:00.000Z`,
  });
const password = (n: number) =>
  stored('AccountPasswordSet', {
    accountUuid: account(n),
    passwordHash: `hash-${n}`,
    setAt: '2026-11-23T11:00:00.000Z',
  });

/** Signups in one batch: their login rows in one statement, the tables as when applied one by one. */
describe('OAuthProjection: a batch of registrations', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new OAuthProjection();

  const logins = async (from: number, to: number) =>
    (await scratch.ds.query(
      `SELECT account_uuid, email, created_at FROM oauth_account_logins
        WHERE account_uuid BETWEEN $1 AND $2 ORDER BY account_uuid`,
      [account(from), account(to)],
    )) as Record<string, unknown>[];

  const events = (base: number) => [
    registered(base + 1, 'one@example.com'),
    registered(base + 2, null),
    registered(base + 3, 'three@example.com'),
    password(base + 1),
    registered(base + 4, 'four@example.com'),
    // The same account again: the first registration stays.
    registered(base + 4, 'four-again@example.com', 30),
  ];

  it('writes a run of registrations in one statement, leaving what one by one leaves', async () => {
    await scratch.ds.transaction(async (em) => {
      for (const e of events(100)) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch(events(200), em);
    });

    const oneByOne = await logins(101, 104);
    const batched = await logins(201, 204);
    expect(oneByOne.map((r) => r.email)).toEqual([
      'one@example.com',
      'three@example.com',
      'four@example.com',
    ]);
    expect(batched.map(({ account_uuid: _, ...rest }) => rest)).toEqual(
      oneByOne.map(({ account_uuid: _, ...rest }) => rest),
    );
    // The run of two registrations, the password, then the run of two.
    expect(statements.filter((s) => s.includes('oauth_account_logins'))).toHaveLength(2);
    expect(statements).toHaveLength(3);
    expect(
      await scratch.ds.query(`SELECT password_hash FROM oauth_passwords WHERE account_uuid = $1`, [
        account(201),
      ]),
    ).toEqual([{ password_hash: 'hash-201' }]);
  });
});
