import { DataSource } from 'typeorm';
import { queryPrepared } from './prepared';

/**
 * Integer public ids come from PostgreSQL sequences, taken in the command handler
 * before the append (DESIGN.md, "Uniqueness and identifiers"). A failed append burns
 * the number; ids are unique, not gapless.
 *
 * Concurrent requests of one process share round trips: while a `nextval` of a sequence
 * is on its way, the ids asked for meanwhile wait and are then taken together in one
 * statement (`nextIds`), in the order they were asked for. No id is held back for later:
 * each is taken from the sequence while its request waits for it, so ids still follow the
 * order in which requests took them, as before (a block of ids kept per process would hand
 * out ids below ones already used).
 */
export function nextId(db: DataSource, sequence: string): Promise<number> {
  if (!/^[a-z_]+$/.test(sequence)) return Promise.reject(new Error(`Bad sequence name ${sequence}`));
  let batchers = BATCHERS.get(db);
  if (!batchers) BATCHERS.set(db, (batchers = new Map()));
  let batcher = batchers.get(sequence);
  if (!batcher) batchers.set(sequence, (batcher = new IdBatcher(db, sequence)));
  return batcher.take();
}

/** `count` ids in one round trip, for bulk commands (member import). */
export async function nextIds(db: DataSource, sequence: string, count: number): Promise<number[]> {
  if (!/^[a-z_]+$/.test(sequence)) throw new Error(`Bad sequence name ${sequence}`);
  if (count <= 0) return [];
  // Named prepared statements: one shape per sequence (and one for many), planned once per connection.
  const rows =
    count === 1
      ? await queryPrepared<{ id: number }>(db, `SELECT nextval('${sequence}')::int AS id`, [])
      : await queryPrepared<{ id: number }>(
          db,
          `SELECT nextval('${sequence}')::int AS id FROM generate_series(1, $1::int)`,
          [count],
        );
  return rows.map((r) => r.id);
}

const BATCHERS = new WeakMap<DataSource, Map<string, IdBatcher>>();

interface Waiter {
  resolve(id: number): void;
  reject(error: unknown): void;
}

/** At most one statement of a sequence in flight; whoever asks meanwhile goes in the next. */
class IdBatcher {
  private waiting: Waiter[] = [];
  private inFlight = false;

  constructor(
    private readonly db: DataSource,
    private readonly sequence: string,
  ) {}

  take(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight = true;
    nextIds(this.db, this.sequence, batch.length).then(
      (ids) => this.settled(() => batch.forEach((w, i) => w.resolve(ids[i]))),
      (error: unknown) => this.settled(() => batch.forEach((w) => w.reject(error))),
    );
  }

  private settled(answer: () => void): void {
    this.inFlight = false;
    answer();
    if (this.waiting.length) this.flush();
  }
}
