import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import type { AppConfig } from '../config/config';
import { createDataSource } from '../database/data-source';
import type { AppendResult, StoredEvent } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { CheckpointFeed } from './checkpoint-feed';
import { ConsistencyWaiter } from './consistency';
import type { SubscriberRegistry } from './subscriber-registry';

let db: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
  await ds.initialize();
});
afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

const position = (prepare: bigint) => ({ commit: 1n, prepare });

function appendOf(prepare: bigint): AppendResult {
  const event = { type: 'Thing', position: position(prepare) } as StoredEvent;
  return { nextExpectedRevision: 0n, position: event.position, events: [event] };
}

describe('ConsistencyWaiter', () => {
  it('waits on the announcements of a live feed, not on a query of the checkpoints every 25 ms', async () => {
    let checkpointReads = 0;
    // The same database, counting the waiter's reads of subscriber_checkpoints.
    const counting = Object.create(ds) as DataSource;
    counting.query = (sql: string, params?: unknown[]) => {
      if (sql.includes('subscriber_checkpoints')) checkpointReads++;
      return ds.query(sql, params);
    };
    const registry = { projectionsHandling: () => ['things'] } as unknown as SubscriberRegistry;
    const feed = new CheckpointFeed(ds);
    const waiter = new ConsistencyWaiter(
      counting,
      registry,
      new JsonLogger('error'),
      { readYourWritesTimeoutMs: 10_000 } as AppConfig,
      feed,
    );
    try {
      await feed.listen();
      expect(feed.live).toBe(true);
      feed.publish({ name: 'things', position: position(1n) });

      let done = false;
      const waited = waiter.waitFor([appendOf(5n)], 10_000).then((ok) => ((done = true), ok));
      // The projection takes its time: the waiter must not return before its checkpoint passes.
      await new Promise((resolve) => setTimeout(resolve, 600));
      feed.publish({ name: 'things', position: position(4n) });
      await new Promise((resolve) => setImmediate(resolve));
      expect(done).toBe(false);
      feed.publish({ name: 'things', position: position(5n) });
      expect(await waited).toBe(true);
      // 600 ms of waiting: a read every 25 ms would be about 24; a live feed needs a few.
      expect(checkpointReads).toBeLessThanOrEqual(4);
    } finally {
      waiter.onModuleDestroy();
      await feed.onModuleDestroy();
    }
  });
});
