import type { StoredEvent } from '../event-store/event-store.port';

interface Reading {
  /** Callers who asked while the read in flight was under way: they share the next one. */
  next?: { promise: Promise<readonly StoredEvent[]>; start: () => void };
}

/**
 * Whole-stream reads shared by concurrent callers of one stream. A caller asking while no
 * read of the stream is in flight starts one; those asking while one is in flight wait for
 * it to return and then share one new read. So every caller is answered by a read sent
 * after it asked (it sees every write committed before it asked, exactly as a read of its
 * own would), and N concurrent callers of a stream cost about two statements per round
 * trip instead of N. A failed read fails the callers who shared it, as their own would.
 */
export class SharedStreamReads {
  private readonly reading = new Map<string, Reading>();

  constructor(private readonly readStream: (streamName: string) => Promise<StoredEvent[]>) {}

  read(streamName: string): Promise<readonly StoredEvent[]> {
    const reading = this.reading.get(streamName);
    if (!reading) {
      const own: Reading = {};
      this.reading.set(streamName, own);
      return this.send(streamName, own);
    }
    if (!reading.next) {
      let start!: () => void;
      const promise = new Promise<void>((resolve) => (start = resolve)).then(() =>
        this.send(streamName, reading),
      );
      reading.next = { promise, start };
    }
    return reading.next.promise;
  }

  /** Sends one read; when it returns, starts the read its waiters share, or ends the stream's entry. */
  private send(streamName: string, reading: Reading): Promise<readonly StoredEvent[]> {
    const sent = this.readStream(streamName);
    const settled = () => {
      const next = reading.next;
      if (next) {
        reading.next = undefined;
        next.start();
      } else this.reading.delete(streamName);
    };
    sent.then(settled, settled);
    return sent;
  }
}
