import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port';
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

const keyOf = (ref: Pick<ClaimRef, 'scope' | 'kind' | 'value'>) =>
  `${ref.kind.name}\u0000${ref.scope}\u0000${hashClaimValue(ref.value)}`;

/**
 * Claims in a map, for unit tests over the in-memory event store. Claimed appends run
 * one at a time, so the check, the append and the map update act as one transaction,
 * as they do on PostgreSQL.
 */
export class InMemoryClaims implements Claims {
  private readonly owners = new Map<string, string>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: EventStore) {}

  append(request: ClaimedAppend): Promise<AppendResult> {
    const take = sortClaims(request.take);
    const release = sortClaims(request.release).filter((r) => !take.some((t) => sameClaim(r, t)));
    const run = async () => {
      for (const ref of take) {
        const owner = this.owners.get(keyOf(ref));
        if (owner !== undefined && owner !== request.stream)
          throw new ClaimTakenError(ref.scope, ref.kind.name, ref.value, owner);
      }
      const result = await this.store.append(request.stream, request.events, {
        expectedRevision: request.expectedRevision,
      });
      for (const ref of release)
        if (this.owners.get(keyOf(ref)) === request.stream) this.owners.delete(keyOf(ref));
      for (const ref of take) this.owners.set(keyOf(ref), request.stream);
      return result;
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  appendMany(requests: readonly ClaimedAppend[]): Promise<AppendResult[]> {
    const run = async () => {
      const plans = planMany(requests);
      // A value its owner gives up in this same write is free for another owner in it.
      const freed = new Set(
        plans.flatMap((plan, i) =>
          plan.release.filter((ref) => this.owners.get(keyOf(ref)) === requests[i].stream).map(keyOf),
        ),
      );
      for (const [i, plan] of plans.entries())
        for (const ref of plan.take) {
          const owner = this.owners.get(keyOf(ref));
          if (owner !== undefined && owner !== requests[i].stream && !freed.has(keyOf(ref)))
            throw new ClaimTakenError(ref.scope, ref.kind.name, ref.value, owner);
        }
      // Every revision is checked before anything is appended: all or nothing.
      for (const r of requests) {
        const events = await this.store.readStream(r.stream);
        const actual = events.length ? events[events.length - 1].revision : 'no_stream';
        if (r.expectedRevision !== 'any' && !matches(r.expectedRevision, actual))
          throw new WrongExpectedRevisionError(r.stream, r.expectedRevision, actual);
      }
      const results: AppendResult[] = [];
      for (const r of requests)
        results.push(await this.store.append(r.stream, r.events, { expectedRevision: r.expectedRevision }));
      for (const key of freed) this.owners.delete(key);
      for (const [i, plan] of plans.entries())
        for (const ref of plan.take) this.owners.set(keyOf(ref), requests[i].stream);
      return results;
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined> {
    return Promise.resolve(this.owners.get(keyOf({ scope, kind, value })));
  }
}

function matches(expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean {
  if (expected === 'stream_exists') return actual !== 'no_stream';
  return expected === actual;
}
