import type { ServerWritableStream } from '@grpc/grpc-js';
import type { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { TransactionLog } from './transaction-log';

type ReadCall = ServerWritableStream<ReadReq, ReadResp>;

/** Writes with backpressure and turns the client's cancellation into "stop quietly". */
export class ResponseWriter {
  cancelled = false;
  private readonly onCancel = new Set<() => void>();

  constructor(private readonly call: ReadCall) {
    call.on('cancelled', () => {
      this.cancelled = true;
      for (const hook of [...this.onCancel]) hook();
    });
  }

  async write(response: ReadResp): Promise<boolean> {
    if (this.cancelled) return false;
    if (!this.call.write(response)) {
      await this.until((resolve) => {
        this.call.once('drain', resolve);
        return () => this.call.removeListener('drain', resolve);
      });
    }
    return !this.cancelled;
  }

  untilAppendOrCancel(log: TransactionLog): Promise<void> {
    return this.until((resolve) => log.onAppend(resolve));
  }

  end(): void {
    if (!this.cancelled) this.call.end();
  }

  fail(error: Error): void {
    if (!this.cancelled) this.call.emit('error', error);
  }

  /** Waits for whatever `arm` listens to, or for cancellation; `arm` returns how to stop listening. */
  private until(arm: (resolve: () => void) => () => void): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let disarm = () => {};
      const done = () => {
        this.onCancel.delete(done);
        disarm();
        resolve();
      };
      this.onCancel.add(done);
      disarm = arm(done);
    });
  }
}
