import type { AppendResult, EventStore } from '../event-store/event-store.port';
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

  ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined> {
    return Promise.resolve(this.owners.get(keyOf({ scope, kind, value })));
  }
}
