import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import { AppendResult, encodePosition, NewEvent } from '../../src/core/event-store/event-store.port';
import { ConsistencyWaiter } from '../../src/core/projections/consistency';
import { ProjectionRebuilder } from '../../src/core/projections/rebuild';
import { SubscriberRegistry } from '../../src/core/projections/subscriber-registry';
import type { BootstrapResult } from '../../src/modules/identity/bootstrap/bootstrap.service';
import { startTestApp, TestApp } from '../support/app';
import { killAll, runToCompletion } from '../support/processes';
import { SPINE_TEST_EVENT, SpineTestModule } from '../support/spine-test.module';

const meta = (workspaceId: string) => ({
  workspaceId,
  actor: SYSTEM_ACTOR,
  correlationId: 'rebuild-seed',
  occurredAt: new Date().toISOString(),
  schemaVersion: 1,
});

describe('projections rebuild (e2e)', () => {
  let t: TestApp;
  let db: DataSource;
  let a: BootstrapResult;
  const seeded: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ extraModules: [SpineTestModule] });
    db = t.app.get(DataSource);
    a = await t.bootstrap('Rebuild A');
    // 60 workspaces of 5 events each, and 200 events for the test projection.
    const appends: AppendResult[] = [];
    for (let i = 0; i < 60; i++) {
      const id = randomUUID();
      seeded.push(id);
      const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, i, n)).toISOString();
      const events: NewEvent[] = [
        {
          type: 'WorkspaceCreated',
          data: {
            workspaceId: id,
            name: `W${i}`,
            settings: { defaultMemberRoleId: null, timezone: 'UTC', features: {} },
            createdAt: at(0),
          },
          metadata: meta(id),
        },
        ...[1, 2, 3, 4].map((n) => ({
          type: 'WorkspaceUpdated',
          data: {
            workspaceId: id,
            name: `W${i}.${n}`,
            settings: n === 2 ? { timezone: 'Europe/Paris' } : undefined,
            updatedAt: at(n),
          },
          metadata: meta(id),
        })),
      ];
      appends.push(await t.store.append(`workspace-${id}`, events, { expectedRevision: 'no_stream' }));
    }
    for (let n = 0; n < 200; n += 50) {
      const events = Array.from({ length: 50 }, (_, k) => ({
        type: SPINE_TEST_EVENT,
        data: { seq: n + k + 1 },
        metadata: meta(a.workspaceId),
      }));
      appends.push(await t.store.append('spinetest-rebuild', events));
    }
    expect(await t.app.get(ConsistencyWaiter).waitFor(appends, 20_000)).toBe(true);
  });

  afterAll(async () => {
    await killAll();
    await t?.close();
  });

  const workspacesTable = () =>
    db.query(`SELECT id, name, settings, created_at, updated_at FROM workspaces ORDER BY id`) as Promise<
      Record<string, unknown>[]
    >;
  const oid = async (table: string) =>
    ((await db.query(`SELECT $1::regclass::oid AS oid`, [table])) as { oid: number }[])[0].oid;
  const checkpointRow = async (name: string) =>
    (
      (await db.query(
        `SELECT position_commit, position_prepare FROM subscriber_checkpoints WHERE name = $1`,
        [name],
      )) as {
        position_commit: string;
        position_prepare: string;
      }[]
    )[0];

  it('replays into fresh tables while the API keeps answering from the old ones, then swaps them in', async () => {
    const before = await workspacesTable();
    const tableBefore = await oid('workspaces');
    // Damage the read model behind the projection's back.
    await db.query(`DELETE FROM workspaces WHERE id = ANY($1)`, [seeded.slice(0, 10)]);
    await db.query(`UPDATE workspaces SET name = 'corrupted', settings = '{}' WHERE id = ANY($1)`, [
      seeded.slice(10, 20),
    ]);

    // Reads all through the rebuild, the swap included.
    let rebuilding = true;
    const reads: number[] = [];
    const reader = (async () => {
      while (rebuilding) {
        const list = await t.request('GET', '/w', { token: a.apiKey });
        reads.push(list.status === 200 && list.body.total === 1 ? 200 : list.status);
        const own = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
        reads.push(own.status);
      }
    })();

    let batches = 0;
    let duringRebuild: { put: number; name: string; get: string; rebuiltRows: number } | undefined;
    const p = t.app.get(SubscriberRegistry).projection('workspaces')!;
    const result = await new ProjectionRebuilder(db, t.store).rebuild(p, {
      batchSize: 20,
      beforeBatch: async () => {
        if (++batches !== 6) return;
        // Half-way: a write through the API is projected into the live tables, read back at once.
        const put = await t.request('PUT', `/w/${a.workspaceId}`, {
          token: a.apiKey,
          body: { name: 'Renamed during rebuild' },
        });
        const get = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
        const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM rebuild_workspaces.workspaces`)) as {
          n: number;
        }[];
        duringRebuild = { put: put.status, name: put.body.name, get: get.body.name, rebuiltRows: n };
      },
    });
    rebuilding = false;
    await reader;

    expect(batches).toBeGreaterThan(6);
    expect(duringRebuild).toEqual({
      put: 200,
      name: 'Renamed during rebuild',
      get: 'Renamed during rebuild',
      rebuiltRows: expect.any(Number),
    });
    expect(duringRebuild!.rebuiltRows).toBeGreaterThan(0);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((s) => s === 200)).toBe(true);
    expect(result.events).toBe(60 * 5 + 2); // the seed, the bootstrap's WorkspaceCreated and the PUT

    // The rows are back, equal to what the replay gives; the write made during the rebuild is kept.
    const after = await workspacesTable();
    const expected = before.map((row) =>
      row.id === a.workspaceId
        ? { ...row, name: 'Renamed during rebuild', updated_at: expect.any(Date) }
        : row,
    );
    expect(after).toEqual(expected);
    expect(await oid('workspaces')).not.toBe(tableBefore);
    expect(await db.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'rebuild_workspaces'`)).toEqual([]);
    expect(await checkpointRow('rebuild:workspaces')).toBeUndefined();
    const [head] = await t.store.readAll({
      direction: 'backwards',
      maxCount: 1,
      filter: { eventTypes: ['WorkspaceCreated', 'WorkspaceUpdated'] },
    });
    const live = await checkpointRow('workspaces');
    expect(`${live.position_commit}-${live.position_prepare}`).toBe(encodePosition(head.position));

    // The live runner found its checkpoint moved, reloaded it, and carries on in the new tables.
    const put = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { name: 'After the swap' },
    });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('After the swap');
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body.name).toBe(
      'After the swap',
    );
  });

  it('`projections rebuild all` from the CLI restores every read model, keeping index names and sequence defaults', async () => {
    const counts = () =>
      db.query(`SELECT event_id, seq, applied FROM spine_test_counts ORDER BY seq`) as Promise<
        { seq: number; applied: number }[]
      >;
    const indexes = () =>
      db.query(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'spine_test_counts' ORDER BY indexname`,
      );
    const countsBefore = await counts();
    const indexesBefore = await indexes();
    const workspacesBefore = await workspacesTable();
    expect(countsBefore).toHaveLength(200);
    expect(indexesBefore.map((i: { indexname: string }) => i.indexname)).toEqual([
      'spine_test_counts_by_pid',
      'spine_test_counts_event',
      'spine_test_counts_pkey',
    ]);

    await db.query(`DELETE FROM spine_test_counts WHERE seq % 3 = 0`);
    await db.query(`UPDATE spine_test_counts SET applied = 7 WHERE seq % 3 = 1`);
    await db.query(`DELETE FROM workspaces`);

    const env = {
      DATABASE_URL: t.config.databaseUrl,
      REDIS_URL: t.config.redisUrl,
      REDIS_PREFIX: t.config.redisPrefix,
      LOG_LEVEL: 'warn',
    };
    const output = await runToCompletion(
      'test/support/processes/cli.ts',
      ['projections', 'rebuild', 'all', '--batch-size', '40'],
      env,
      90_000,
    );
    for (const name of ['workspaces', 'members', 'api-keys', 'event-log', 'spine-test-counts'])
      expect(output).toMatch(new RegExp(`^Rebuilt ${name}: \\d+ events`, 'm'));

    expect(await counts()).toEqual(countsBefore);
    expect(await workspacesTable()).toEqual(workspacesBefore);
    expect(await indexes()).toEqual(indexesBefore);
    expect(await db.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'`)).toEqual([]);

    // row_id's DEFAULT still draws from its sequence, now owned by the new table.
    const [{ seq }] = (await db.query(
      `SELECT pg_get_serial_sequence('spine_test_counts', 'row_id') AS seq`,
    )) as { seq: string }[];
    expect(seq).toBe('public.spine_test_counts_row_id_seq');
    const [{ max }] = (await db.query(`SELECT max(row_id)::int AS max FROM spine_test_counts`)) as {
      max: number;
    }[];
    const more = await t.store.append('spinetest-rebuild', [
      { type: SPINE_TEST_EVENT, data: { seq: 201 }, metadata: meta(a.workspaceId) },
    ]);
    expect(await t.app.get(ConsistencyWaiter).waitFor([more], 15_000)).toBe(true);
    const [row] = (await db.query(
      `SELECT row_id::int AS row_id, applied FROM spine_test_counts WHERE seq = 201`,
    )) as { row_id: number; applied: number }[];
    expect(row.applied).toBe(1);
    expect(row.row_id).toBeGreaterThan(max);

    // The real CLI entry point reports every projection at the head afterwards.
    const status = JSON.parse(
      await runToCompletion('src/cli.ts', ['projections', 'status', '--json'], env, 90_000),
    ) as { name: string; kind: string; lag: number }[];
    expect(status.filter((s) => s.kind === 'projection').map((s) => s.name)).toEqual(
      expect.arrayContaining(['workspaces', 'members', 'api-keys', 'event-log']),
    );
    expect(status.filter((s) => s.lag !== 0)).toEqual([]);
  }, 180_000);
});
