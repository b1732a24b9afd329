import type { Pool, PoolClient } from 'pg';
import type { AppendResult } from '../event-store/event-store.port';
import type { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import {
  ClaimedAppend,
  ClaimKind,
  ClaimRef,
  Claims,
  ClaimTakenError,
  hashClaimValue,
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
const OWNER_SQL = `SELECT owner FROM claims WHERE scope = $1 AND kind = $2 AND value_hash = $3`;

const params = (ref: ClaimRef) => [ref.scope, ref.kind.name, hashClaimValue(ref.value)];

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
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const ref of release) await client.query(RELEASE_SQL, [...params(ref), request.stream]);
      for (const ref of take) await this.take(client, ref, request.stream);
      const result = await this.store.appendInTransaction(client, request.stream, request.events, {
        expectedRevision: request.expectedRevision,
      });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ owner: string }>(OWNER_SQL, params({ scope, kind, value }));
    return rows[0]?.owner;
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
