import { DataSource, EntityManager } from 'typeorm';
import type { EventFilter, EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { comparePositions, encodePosition } from '../event-store/event-store.port';
import { CHECKPOINT_CHANNEL, readCheckpoint, writeCheckpoint } from './checkpoints';
import { applyEvents, type RegisteredProjection } from './projection';

/** Second half of the advisory lock that keeps two rebuilds of one projection apart. */
const REBUILD_LOCK_NAMESPACE = 74_203;

type Queryable = Pick<EntityManager, 'query'>;

export interface RebuildResult {
  projection: string;
  events: number;
  position: Position | undefined;
  ms: number;
}

export interface RebuildOptions {
  batchSize: number;
  /** Progress lines for an operator. */
  onProgress?: (line: string) => void;
  /** Test hook: runs before each catch-up batch. */
  beforeBatch?: () => Promise<void>;
}

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Schema the projection is rebuilt in; names like `member-roles` become `rebuild_member_roles`. */
export function rebuildSchemaFor(projection: string): string {
  return `rebuild_${projection.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
}

export const rebuildCheckpointFor = (projection: string): string => `rebuild:${projection}`;

export function filterOf(p: RegisteredProjection): EventFilter | undefined {
  const types = p.definition.eventTypes as readonly string[] | 'all';
  return types === 'all' ? undefined : { eventTypes: types };
}

/**
 * Rebuilds a projection's read model from the first event, into fresh tables, while the
 * live tables keep answering, then swaps them in. Projection code is unchanged: its
 * table names are unqualified, and the rebuild's transactions put the rebuild schema
 * first on the search_path.
 *
 * 1. `rebuild_<name>` schema with `CREATE TABLE t (LIKE public.t INCLUDING ALL)` per table
 *    (columns, defaults, constraints, indexes, comments).
 * 2. Catch up in batches, each one transaction with its own checkpoint row (kind 'rebuild').
 * 3. Swap in ONE transaction: lock the live checkpoint row FOR UPDATE (the live runner's
 *    batch waits on it, then finds its checkpoint changed and reloads: 'stale'), apply
 *    what is left, drop the live tables, move the rebuilt ones into public under the old
 *    index names, set the live checkpoint to the rebuild's position, drop the schema.
 *
 * Sequences: a serial column's DEFAULT keeps pointing at the live sequence (LIKE copies
 * the expression); the sequence is detached while the old table is dropped and owned
 * by the new table once it is in public. An identity column gets the new table's own
 * sequence, advanced past the old one.
 * Not copied by LIKE, so refused or lost: foreign keys (refused up front),
 * triggers, row-level security policies and grants beyond the owner's. Read-model
 * tables are expected to have none of these.
 */
export class ProjectionRebuilder {
  constructor(
    private readonly db: DataSource,
    private readonly store: EventStore,
  ) {}

  async rebuild(p: RegisteredProjection, options: RebuildOptions): Promise<RebuildResult> {
    const started = Date.now();
    const name = p.definition.name;
    const schema = rebuildSchemaFor(name);
    const say = options.onProgress ?? (() => undefined);
    // A session lock on a connection held for the whole rebuild: a second rebuild of the
    // same projection would otherwise drop this one's schema under it.
    const lockRunner = this.db.createQueryRunner();
    await lockRunner.connect();
    try {
      const [{ ok }] = (await lockRunner.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [
        REBUILD_LOCK_NAMESPACE,
        name,
      ])) as { ok: boolean }[];
      if (!ok) throw new Error(`A rebuild of projection "${name}" is already running`);
      try {
        await this.prepare(p, schema);
        say(`${name}: replaying from the first event into schema ${schema}`);
        let { position, events } = await this.catchUp(p, schema, options, say);
        const swapped = await this.swap(p, schema, position);
        position = swapped.position;
        events += swapped.events;
        for (const table of p.definition.tables) await this.db.query(`ANALYZE public.${ident(table)}`);
        say(`${name}: swapped in at ${position ? encodePosition(position) : 'the start'} (${events} events)`);
        return { projection: name, events, position, ms: Date.now() - started };
      } finally {
        await lockRunner
          .query('SELECT pg_advisory_unlock($1, hashtext($2))', [REBUILD_LOCK_NAMESPACE, name])
          .catch(() => undefined);
      }
    } finally {
      await lockRunner.release();
    }
  }

  /** Always from scratch: a rebuild that died half-way leaves a schema nobody reads. */
  private async prepare(p: RegisteredProjection, schema: string): Promise<void> {
    await this.db.transaction(async (em) => {
      for (const table of p.definition.tables) {
        const [{ reg }] = (await em.query('SELECT to_regclass($1) AS reg', [`public.${ident(table)}`])) as {
          reg: string | null;
        }[];
        if (!reg)
          throw new Error(
            `Projection "${p.definition.name}" lists table "${table}", which does not exist in public`,
          );
        const fks = (await em.query(
          `SELECT conname FROM pg_constraint WHERE contype = 'f' AND (conrelid = $1::regclass OR confrelid = $1::regclass)`,
          [`public.${ident(table)}`],
        )) as { conname: string }[];
        if (fks.length)
          throw new Error(
            `Table "${table}" has foreign keys (${fks.map((f) => f.conname).join(', ')}), which a rebuild cannot carry over`,
          );
      }
      await em.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
      await em.query(`CREATE SCHEMA ${ident(schema)}`);
      for (const table of p.definition.tables) {
        await em.query(
          `CREATE TABLE ${ident(schema)}.${ident(table)} (LIKE public.${ident(table)} INCLUDING ALL)`,
        );
      }
      await em.query('DELETE FROM subscriber_checkpoints WHERE name = $1', [
        rebuildCheckpointFor(p.definition.name),
      ]);
    });
  }

  /** Batches until one comes back short: close enough to the head to swap. */
  private async catchUp(
    p: RegisteredProjection,
    schema: string,
    options: RebuildOptions,
    say: (line: string) => void,
  ): Promise<{ position: Position | undefined; events: number }> {
    const checkpoint = rebuildCheckpointFor(p.definition.name);
    let position: Position | undefined;
    let events = 0;
    let lastReport = Date.now();
    for (;;) {
      await options.beforeBatch?.();
      const batch = await this.store.readAll({
        after: position,
        maxCount: options.batchSize,
        filter: filterOf(p),
      });
      if (!batch.length) break;
      await this.db.transaction(async (em) => {
        await this.apply(em, p, schema, batch);
        await writeCheckpoint(em, checkpoint, 'rebuild', batch[batch.length - 1].position, batch.length);
      });
      position = batch[batch.length - 1].position;
      events += batch.length;
      if (Date.now() - lastReport > 2000) {
        say(`${p.definition.name}: ${events} events replayed`);
        lastReport = Date.now();
      }
      if (batch.length < options.batchSize) break;
    }
    return { position, events };
  }

  private async swap(
    p: RegisteredProjection,
    schema: string,
    from: Position | undefined,
  ): Promise<{ position: Position | undefined; events: number }> {
    const name = p.definition.name;
    return this.db.transaction(async (em) => {
      await em.query(
        `INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare) VALUES ($1, 'projection', 0, 0)
         ON CONFLICT (name) DO NOTHING`,
        [name],
      );
      // From here until commit the live runner cannot commit a batch of this projection.
      const live = await readCheckpoint(em, name, true);
      let position = from;
      let events = 0;
      // Apply until the store has nothing more. PostgreSQL: appends committed after this
      // transaction took its id stay behind the store's horizon until we commit, and sort
      // after `position`; the live runner takes them from there.
      for (;;) {
        const batch = await this.store.readAll({ after: position, maxCount: 1000, filter: filterOf(p) });
        if (!batch.length) break;
        await this.apply(em, p, schema, batch);
        position = batch[batch.length - 1].position;
        events += batch.length;
      }
      if (live && (!position || comparePositions(live, position) > 0)) {
        throw new Error(
          `Projection "${name}" is live at ${encodePosition(live)}, past the rebuild; nothing was swapped, run the rebuild again`,
        );
      }
      for (const table of p.definition.tables) await this.moveIntoPublic(em, schema, table);
      await em.query(
        `UPDATE subscriber_checkpoints SET position_commit = $2, position_prepare = $3, updated_at = now(),
           events_handled = COALESCE((SELECT events_handled FROM subscriber_checkpoints WHERE name = $4), 0) + $5
         WHERE name = $1`,
        [
          name,
          (position?.commit ?? 0n).toString(),
          (position?.prepare ?? 0n).toString(),
          rebuildCheckpointFor(name),
          events,
        ],
      );
      await em.query('DELETE FROM subscriber_checkpoints WHERE name = $1', [rebuildCheckpointFor(name)]);
      await em.query(`DROP SCHEMA ${ident(schema)} CASCADE`);
      await em.query('SELECT pg_notify($1, $2)', [CHECKPOINT_CHANNEL, name]);
      return { position, events };
    });
  }

  private async apply(
    em: EntityManager,
    p: RegisteredProjection,
    schema: string,
    events: StoredEvent[],
  ): Promise<void> {
    await em.query(`SET LOCAL search_path TO ${ident(schema)}, public`);
    await applyEvents(p.handler, events, em);
    await em.query('SET LOCAL search_path TO public');
  }

  /** Replaces public.<table> with the rebuilt one, keeping index names and sequences. */
  private async moveIntoPublic(em: EntityManager, schema: string, table: string): Promise<void> {
    const oldTable = `public.${ident(table)}`;
    const newTable = `${ident(schema)}.${ident(table)}`;
    const sequences = await ownedSequences(em, oldTable);
    // Detached so that dropping the old table keeps it; owned again once the new table is in public.
    for (const s of sequences.filter((s) => s.kind === 'a'))
      await em.query(`ALTER SEQUENCE ${s.sequence} OWNED BY NONE`);
    const renames = await indexRenames(em, 'public', schema, table);
    await em.query(`DROP TABLE ${oldTable}`);
    // Through temporary names, so two indexes swapping names never collide.
    for (const [i, r] of renames.entries())
      await em.query(`ALTER INDEX ${ident(schema)}.${ident(r.from)} RENAME TO ${ident(`__rebuild_${i}`)}`);
    for (const [i, r] of renames.entries())
      await em.query(`ALTER INDEX ${ident(schema)}.${ident(`__rebuild_${i}`)} RENAME TO ${ident(r.to)}`);
    await em.query(`ALTER TABLE ${newTable} SET SCHEMA public`);
    for (const s of sequences.filter((s) => s.kind === 'a'))
      await em.query(`ALTER SEQUENCE ${s.sequence} OWNED BY ${oldTable}.${ident(s.column)}`);
    for (const s of sequences.filter((s) => s.kind === 'i' && s.lastValue !== null)) {
      // The old identity sequence went with the old table: carry on after its last value.
      await em.query(
        `SELECT setval(seq, GREATEST($3::bigint, COALESCE((SELECT last_value FROM pg_sequences WHERE format('%I.%I', schemaname, sequencename)::regclass = seq), 0)))
         FROM (SELECT pg_get_serial_sequence($1, $2)::regclass AS seq) s`,
        [oldTable, s.column, s.lastValue],
      );
    }
  }
}

interface OwnedSequence {
  column: string;
  /** Qualified, quoted name. */
  sequence: string;
  /** 'a': serial (OWNED BY); 'i': identity column. */
  kind: 'a' | 'i';
  lastValue: string | null;
}

async function ownedSequences(db: Queryable, table: string): Promise<OwnedSequence[]> {
  const rows = (await db.query(
    `SELECT a.attname AS column, quote_ident(n.nspname) || '.' || quote_ident(s.relname) AS sequence, d.deptype AS kind,
            ps.last_value::text AS last_value
     FROM pg_depend d
     JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
     JOIN pg_namespace n ON n.oid = s.relnamespace
     JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
     LEFT JOIN pg_sequences ps ON ps.schemaname = n.nspname AND ps.sequencename = s.relname
     WHERE d.refobjid = $1::regclass AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')`,
    [table],
  )) as { column: string; sequence: string; kind: 'a' | 'i'; last_value: string | null }[];
  return rows.map((r) => ({ column: r.column, sequence: r.sequence, kind: r.kind, lastValue: r.last_value }));
}

/**
 * LIKE names the new indexes by the default rules; pairs each with the live index of
 * the same definition so the rebuilt table keeps the names migrations gave (renaming
 * an index also renames its constraint).
 */
async function indexRenames(
  db: Queryable,
  liveSchema: string,
  rebuildSchema: string,
  table: string,
): Promise<{ from: string; to: string }[]> {
  const list = async (schema: string) =>
    (await db.query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, [
      schema,
      table,
    ])) as {
      indexname: string;
      indexdef: string;
    }[];
  // "CREATE UNIQUE INDEX name ON schema.table USING ..." without its name and schema.
  const shape = (def: string) =>
    def.replace(/^(CREATE (?:UNIQUE )?INDEX) .+? ON (?:ONLY )?\S+?\.(\S+) /, '$1 ON $2 ');
  const live = await list(liveSchema);
  const fresh = await list(rebuildSchema);
  const out: { from: string; to: string }[] = [];
  for (const f of fresh) {
    const match = live.find(
      (l) => shape(l.indexdef) === shape(f.indexdef) && !out.some((o) => o.to === l.indexname),
    );
    if (match && match.indexname !== f.indexname) out.push({ from: f.indexname, to: match.indexname });
  }
  return out;
}
