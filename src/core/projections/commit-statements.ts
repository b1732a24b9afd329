import type { ClientBase } from 'pg';
import type { EntityManager } from 'typeorm';

/**
 * Statements a projection's handler leaves to be sent with its batch's COMMIT, in the same
 * round trip (a multi-statement simple query), instead of one round trip each. For a write
 * whose result the handler does not need (the audit log's INSERT of a batch's events): at
 * a few `PUT`s per batch, each round trip a batch saves is one socket write and wake-up
 * fewer in the service and in PostgreSQL per batch.
 *
 * Only the batch's own transaction defers (core/projections/subscribers.host.ts registers
 * its EntityManager); anywhere else (a rebuild, a spec's manager) the statement runs at
 * once. Deferred statements keep their order with every other statement of the
 * transaction: any statement sent on the transaction's connection first sends those
 * deferred before it. A deferred statement that fails fails the commit: nothing of the
 * batch is written, as when a handler throws.
 */
export class CommitStatements {
  private pending: string[] = [];

  add(sql: string, params: readonly unknown[]): void {
    this.pending.push(inlineParameters(sql, params));
  }

  /** The deferred statements, forgotten here: the caller sends them. */
  take(): string[] {
    return this.pending.splice(0);
  }

  get waiting(): boolean {
    return this.pending.length > 0;
  }
}

const registered = new WeakMap<EntityManager, CommitStatements>();

/**
 * Runs `statements`' owner transaction with deferral on for `em`: while `run` lasts, every
 * query on `client` first sends what is deferred (their order kept). The caller sends what
 * is left with its COMMIT (`statements.take()`).
 */
export async function withCommitStatements<T>(
  em: EntityManager,
  client: ClientBase,
  statements: CommitStatements,
  run: () => Promise<T>,
): Promise<T> {
  const own = client as unknown as { query: (...args: unknown[]) => unknown };
  const query = own.query;
  own.query = function (this: unknown, ...args: unknown[]) {
    if (!statements.waiting) return query.apply(client, args);
    // A stream (COPY, core/database/copy-rows.ts) must be returned as it is: pg runs its
    // queries in the order asked, so the deferred go first without waiting here; if they
    // fail, the transaction is aborted and the stream fails with it (so the batch does).
    if (typeof (args[0] as { submit?: unknown } | undefined)?.submit === 'function') {
      void (query.call(client, statements.take().join(';\n')) as Promise<unknown>).catch(() => undefined);
      return query.apply(client, args);
    }
    // The deferred statements first, then this one (promise-style callers only, as
    // TypeORM's query runner and core/database/prepared.ts are).
    const before = query.call(client, statements.take().join(';\n')) as Promise<unknown>;
    return before.then(() => query.apply(client, args));
  };
  registered.set(em, statements);
  try {
    return await run();
  } finally {
    registered.delete(em);
    delete (own as { query?: unknown }).query;
    if (own.query !== query) own.query = query;
  }
}

/**
 * Leaves `sql` (with `params` as $1, $2, ...) to be sent with the commit of the projection
 * batch whose EntityManager `em` is; anywhere else runs it now. Its result is not
 * returned: only for writes whose outcome the handler does not need. `sql` must hold no
 * `$n` other than its parameters (they are replaced with the values as literals).
 */
export async function writeWithCommit(
  em: EntityManager,
  sql: string,
  params: readonly unknown[],
): Promise<void> {
  const deferred = registered.get(em);
  if (deferred) deferred.add(sql, params);
  else await em.query(sql, params as unknown[]);
}

/**
 * A string literal in the escape syntax (E'...': quotes and backslashes doubled), read the
 * same whatever standard_conforming_strings says. pg's escapeLiteral builds its answer a
 * character at a time: for a batch's JSON document of a few kilobytes it cost as much as
 * the round trip it saves.
 */
function literal(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * `sql` with $n replaced by the n-th value as a literal: text, numbers, booleans and null
 * only (what the deferred writes send; anything else is refused rather than guessed).
 */
export function inlineParameters(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= params.length) throw new Error(`no value for $${n}`);
    const value = params[i];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'string') return literal(value);
    if (typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value)))
      return literal(value.toString());
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    throw new Error(`a deferred statement takes text, numbers, booleans or null, not ${typeof value}`);
  });
}
