/**
 * The stand-in's storage: one append-only log in global order plus a per-stream index,
 * with the write rules of an EventStoreDB node (expected revision checks, idempotent
 * re-appends of the same event ids). It knows nothing of gRPC; streams-service.ts
 * translates the protocol onto it.
 */

export interface LogPosition {
  commit: bigint;
  prepare: bigint;
}

export type ExpectedStreamRevision =
  | { kind: 'any' }
  | { kind: 'no_stream' }
  | { kind: 'stream_exists' }
  | { kind: 'revision'; revision: bigint };

export interface ProposedEvent {
  /** Canonical lower-case uuid. */
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
}

export interface LogRecord extends ProposedEvent {
  streamName: string;
  revision: bigint;
  /** .NET ticks (100 ns) since the Unix epoch, as the server reports `created`. */
  created: bigint;
  position: LogPosition;
}

export type AppendOutcome =
  | {
      kind: 'success';
      /** Revision of the stream's last event after the write (-1n: still no stream). */
      currentRevision: bigint;
      /** What the server reports for the write; undefined when nothing was written. */
      position: LogPosition | undefined;
    }
  | { kind: 'wrong_expected_version'; currentRevision: bigint | undefined };

/** Bytes a record takes in the log besides its payload; only makes positions look real. */
const RECORD_OVERHEAD = 96n;
/** The first user record sits after the chunk header and the node's own epoch records. */
const FIRST_LOG_POSITION = 4096n;

export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export class TransactionLog {
  /** Every record, in global ($all) order. Append-only, so an index is a stable cursor. */
  readonly records: LogRecord[] = [];
  private readonly streams = new Map<string, LogRecord[]>();
  private readonly appendListeners = new Set<() => void>();
  private nextLogPosition = FIRST_LOG_POSITION;

  stream(streamName: string): readonly LogRecord[] | undefined {
    return this.streams.get(streamName);
  }

  /** Revision of the stream's last event, or -1n when the stream does not exist. */
  currentRevision(streamName: string): bigint {
    const events = this.streams.get(streamName);
    return events ? BigInt(events.length - 1) : -1n;
  }

  append(
    streamName: string,
    expected: ExpectedStreamRevision,
    events: readonly ProposedEvent[],
  ): AppendOutcome {
    const current = this.currentRevision(streamName);
    const existing = this.streams.get(streamName) ?? [];

    switch (expected.kind) {
      case 'any': {
        const replay = this.findReplay(existing, events);
        if (replay === 'corrupt')
          return { kind: 'wrong_expected_version', currentRevision: orNoStream(current) };
        if (replay !== undefined) return replay;
        break;
      }
      case 'no_stream':
      case 'revision': {
        const expectedRevision = expected.kind === 'no_stream' ? -1n : expected.revision;
        if (current === expectedRevision) break;
        if (current > expectedRevision) {
          // A retried write of events that already follow the expected revision succeeds
          // without writing them again, as EventStoreDB's idempotency check does.
          const replay = this.replayAt(existing, Number(expectedRevision + 1n), events);
          if (replay) return replay;
        }
        return { kind: 'wrong_expected_version', currentRevision: orNoStream(current) };
      }
      case 'stream_exists':
        if (current < 0n) return { kind: 'wrong_expected_version', currentRevision: undefined };
        break;
    }

    if (events.length === 0) {
      return { kind: 'success', currentRevision: current, position: undefined };
    }

    const created = BigInt(Date.now()) * 10_000n;
    let stream = this.streams.get(streamName);
    if (!stream) this.streams.set(streamName, (stream = []));
    const transactionPosition = this.nextLogPosition;
    let last: LogRecord | undefined;
    for (const event of events) {
      const logPosition = this.nextLogPosition;
      this.nextLogPosition += RECORD_OVERHEAD + recordSize(streamName, event);
      last = {
        ...event,
        streamName,
        revision: BigInt(stream.length),
        created,
        // Implicitly committed writes: each event's $all position is its own log position.
        position: { commit: logPosition, prepare: logPosition },
      };
      stream.push(last);
      this.records.push(last);
    }
    for (const listener of [...this.appendListeners]) listener();
    return {
      kind: 'success',
      currentRevision: last!.revision,
      // The write as a whole: commit at the last record, prepare at the transaction's
      // first record. For a batch this is not the position of any single event.
      position: { commit: last!.position.commit, prepare: transactionPosition },
    };
  }

  /** Index of the first record at or after `position` ($all reads forwards are inclusive). */
  indexAtOrAfter(position: LogPosition): number {
    return this.search((record) => comparePositions(record.position, position) >= 0);
  }

  /** Index of the first record strictly after `position` (subscriptions start after it). */
  indexAfter(position: LogPosition): number {
    return this.search((record) => comparePositions(record.position, position) > 0);
  }

  /** Calls the listener after every write that added records. */
  onAppend(listener: () => void): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  private search(isAtOrPast: (record: LogRecord) => boolean): number {
    let low = 0;
    let high = this.records.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (isAtOrPast(this.records[mid])) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  private replayAt(
    existing: readonly LogRecord[],
    from: number,
    events: readonly ProposedEvent[],
  ): AppendOutcome | undefined {
    if (events.length === 0 || from + events.length > existing.length) return undefined;
    for (let i = 0; i < events.length; i++) {
      if (existing[from + i].id !== events[i].id) return undefined;
    }
    const last = existing[from + events.length - 1];
    return { kind: 'success', currentRevision: last.revision, position: last.position };
  }

  /** With expected revision `any`, a write whose first event id is already in the stream is a replay. */
  private findReplay(
    existing: readonly LogRecord[],
    events: readonly ProposedEvent[],
  ): AppendOutcome | 'corrupt' | undefined {
    if (events.length === 0) return undefined;
    const from = existing.findIndex((record) => record.id === events[0].id);
    if (from < 0) return undefined;
    return this.replayAt(existing, from, events) ?? 'corrupt';
  }
}

function orNoStream(revision: bigint): bigint | undefined {
  return revision < 0n ? undefined : revision;
}

function recordSize(streamName: string, event: ProposedEvent): bigint {
  return BigInt(
    Buffer.byteLength(streamName) +
      Buffer.byteLength(event.type) +
      event.data.length +
      event.customMetadata.length,
  );
}
