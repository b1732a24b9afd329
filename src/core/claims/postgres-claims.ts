import { DatabaseError, Pool, PoolClient } from 'pg';
import type { AppendResult } from '../event-store/event-store.port';
import type { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import {
  ClaimedAppend,
  ClaimKind,
  ClaimRef,
  Claims,
  ClaimTakenError,
  hashClaimValue,
  planMany,
  sameClaim,
  sortClaims,
} from './claims';

// A no-op update on conflict returns the row only when the owner already holds it, so
// re-taking one's own value is idempotent and anyone else's insert returns nothing.
const TAKE_SQL = `
  INSERT INTO claims (scope, kind, value_hash, owner) VALUES ($1, $2, $3, $4)
  ON CONFLICT (scope, kind, value_hash) DO UPDATE SET owner = claims.owner
   WHERE claims.owner = EXCLUDED.owner
  RETURNING owner`;
const RELEASE_SQL = `DELETE FROM claims WHERE scope = $1 AND kind = $2 AND value_hash = $3 AND owner = $4`;
// New owners' claims, in the statement that creates their streams: a held value fails it.
const INSERT_MANY_SQL = `
  INSERT INTO claims (scope, kind, value_hash, owner)
  SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])`;
// Many takes in one statement (a batch of new owners): the rows returned are the keys taken.
const TAKE_MANY_SQL = `
  INSERT INTO claims (scope, kind, value_hash, owner)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
  ON CONFLICT (scope, kind, value_hash) DO UPDATE SET owner = claims.owner
   WHERE claims.owner = EXCLUDED.owner
  RETURNING scope, kind, value_hash`;
const OWNER_SQL = `SELECT owner FROM claims WHERE scope = $1 AND kind = $2 AND value_hash = $3`;
// The holders of many keys in one statement: who refused a new owners' write.
const HOLDERS_SQL = `
  SELECT c.scope, c.kind, c.value_hash, c.owner
    FROM claims c JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(scope, kind, value_hash)
      USING (scope, kind, value_hash)`;

const params = (ref: ClaimRef) => [ref.scope, ref.kind.name, hashClaimValue(ref.value)];

/**
 * INSERT_MANY_SQL's values of several new owners' statements (the event store's group
 * commit sends them as one): their rows together, in the one key order every writer
 * takes claims in.
 */
function mergeClaimRows(values: readonly unknown[][]): unknown[] {
  const rows = values
    .flatMap((columns) => {
      const [scopes, kinds, hashes, owners] = columns as string[][];
      return scopes.map((scope, i) => [scope, kinds[i], hashes[i], owners[i]]);
    })
    .map((row) => ({ key: row.slice(0, 3).join('\u0000'), row }))
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map((keyed) => keyed.row);
  return [0, 1, 2, 3].map((c) => rows.map((r) => r[c]));
}

/**
 * Claims as rows of the `claims` table, written in the transaction that appends the
 * owner's events (PostgresEventStore.appendInTransaction): there is no moment at which
 * one is visible without the other, so no crash leaves a value blocked and nothing needs
 * taking over. Of concurrent takers of one value, the first insert holds the unique key;
 * the others wait for its transaction and then find the row taken (or free, if it rolled
 * back). The transaction is a few statements long: while it is open every event-store
 * subscriber waits for it (DESIGN.md, the pair cursor).
 */
export class PostgresClaims implements Claims {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly pool: Pool,
  ) {}

  async append(request: ClaimedAppend): Promise<AppendResult> {
    const take = sortClaims(request.take);
    const release = sortClaims(request.release).filter((r) => !take.some((t) => sameClaim(r, t)));
    if (!take.length && !release.length)
      return this.store.append(request.stream, request.events, {
        expectedRevision: request.expectedRevision,
      });
    // A new owner (a record, a signup's member) takes its claims in the statement that
    // creates its stream, as an import batch does: one autocommitted round trip instead of
    // six (BEGIN, each take, SAVEPOINT, the append, RELEASE, COMMIT). A conflict fails that
    // statement whole and appendMany's transaction then names the holder, as below.
    // (A value given twice is taken once, as the takes below allow.)
    if (request.expectedRevision === 'no_stream' && !release.length) {
      const distinct = take.filter((ref, i) => i === 0 || !sameClaim(ref, take[i - 1]));
      return (await this.appendMany([{ ...request, take: distinct }]))[0];
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const ref of release) await client.query(RELEASE_SQL, [...params(ref), request.stream]);
      for (const ref of take) await this.take(client, ref, request.stream);
      const result = await this.store.appendInTransaction(client, request.stream, request.events, {
        expectedRevision: request.expectedRevision,
      });
      await client.query('COMMIT');
      this.store.committed();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * All requests in one transaction: releases, then every take in one statement, then the
   * appends (one statement when every stream is new, as in an import batch).
   */
  async appendMany(requests: readonly ClaimedAppend[]): Promise<AppendResult[]> {
    const plans = planMany(requests);
    // New owners only (a signup, an import batch): nothing to release, and a value held by
    // anyone is a conflict, so the claims are a plain insert in the streams' own statement.
    // Any conflict fails that statement whole; the transaction below then says which.
    if (requests.every((r) => r.expectedRevision === 'no_stream') && plans.every((p) => !p.release.length)) {
      // In one key order for every writer, so two batches never wait on each other in a cycle.
      // Each row's key is built once, not in every comparison (an import batch sorts 500+).
      const keyed = plans
        .flatMap((plan, i) =>
          plan.take.map((ref) => {
            const row = [...params(ref), requests[i].stream];
            return { key: row.slice(0, 3).join('\u0000'), row, ref };
          }),
        )
        .sort((a, b) => (a.key < b.key ? -1 : 1));
      const rows = keyed.map((k) => k.row);
      try {
        return await this.store.createStreams(
          requests.map((r) => ({ streamName: r.stream, events: r.events })),
          rows.length
            ? {
                sql: INSERT_MANY_SQL,
                values: [0, 1, 2, 3].map((c) => rows.map((r) => r[c])),
                merge: mergeClaimRows,
              }
            : undefined,
        );
      } catch (error) {
        if (!(error instanceof DatabaseError && error.code === '23505' && error.table === 'claims'))
          throw error;
      }
      // A value is held (a member signing up again, a duplicate in an import): name its holder
      // in one read, as the transaction below would (the first key in key order held by
      // another owner). Only a value freed since, or one the owner itself holds, goes on.
      const { rows: held } = await this.pool.query<{
        scope: string;
        kind: string;
        value_hash: string;
        owner: string;
      }>(
        HOLDERS_SQL,
        [0, 1, 2].map((c) => rows.map((r) => r[c])),
      );
      const holders = new Map(held.map((h) => [[h.scope, h.kind, h.value_hash].join('\u0000'), h.owner]));
      for (const k of keyed) {
        const holder = holders.get(k.key);
        if (holder !== undefined && holder !== k.row[3])
          throw new ClaimTakenError(k.ref.scope, k.ref.kind.name, k.ref.value, holder);
      }
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const [i, plan] of plans.entries())
        for (const ref of plan.release) await client.query(RELEASE_SQL, [...params(ref), requests[i].stream]);
      await this.takeMany(
        client,
        plans.flatMap((plan, i) => plan.take.map((ref) => ({ ref, owner: requests[i].stream }))),
      );
      let results: AppendResult[];
      if (requests.every((r) => r.expectedRevision === 'no_stream')) {
        results = await this.store.createStreamsInTransaction(
          client,
          requests.map((r) => ({ streamName: r.stream, events: r.events })),
        );
      } else {
        results = [];
        for (const r of requests)
          results.push(
            await this.store.appendInTransaction(client, r.stream, r.events, {
              expectedRevision: r.expectedRevision,
            }),
          );
      }
      await client.query('COMMIT');
      this.store.committed();
      return results;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined> {
    // A named prepared statement: parsed and planned once per connection (an inbound text asks it every time).
    const { rows } = await this.pool.query<{ owner: string }>({
      name: 'claims_owner_of',
      text: OWNER_SQL,
      values: params({ scope, kind, value }),
    });
    return rows[0]?.owner;
  }

  private async takeMany(client: PoolClient, takes: { ref: ClaimRef; owner: string }[]): Promise<void> {
    if (!takes.length) return;
    // One key order for every writer, so two batches never wait on each other in a cycle.
    const rows = takes
      .map(({ ref, owner }) => ({ ref, owner, key: params(ref) }))
      .sort((a, b) => (a.key.join('\u0000') < b.key.join('\u0000') ? -1 : 1));
    const { rows: taken } = await client.query<{ scope: string; kind: string; value_hash: string }>(
      TAKE_MANY_SQL,
      [0, 1, 2].map((c) => rows.map((r) => r.key[c])).concat([rows.map((r) => r.owner)]),
    );
    if (taken.length === rows.length) return;
    const got = new Set(taken.map((t) => [t.scope, t.kind, t.value_hash].join('\u0000')));
    // The ones not taken are held by someone else (or were freed meanwhile): say by whom.
    for (const r of rows) if (!got.has(r.key.join('\u0000'))) await this.take(client, r.ref, r.owner);
  }

  private async take(client: PoolClient, ref: ClaimRef, owner: string): Promise<void> {
    for (;;) {
      const taken = await client.query<{ owner: string }>(TAKE_SQL, [...params(ref), owner]);
      if (taken.rows.length) return;
      const { rows } = await client.query<{ owner: string }>(OWNER_SQL, params(ref));
      // Released between the two statements: try again.
      if (rows.length) throw new ClaimTakenError(ref.scope, ref.kind.name, ref.value, rows[0].owner);
    }
  }
}
