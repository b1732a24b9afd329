/**
 * Group commit for the delivery log: items handed in while a batch is being written wait
 * for the next one, so under load N deliveries cost one statement (and one commit) instead
 * of N, and an idle worker's single item is written on the next turn of the event loop.
 * Every caller's promise settles only once its batch's statement has returned: a job that
 * awaits it completes after its row is durable, never before (nothing accepted is lost; a
 * crash before that leaves the job to run again, with the same webhook-id).
 * A failed batch rejects each of its items (their jobs fail and are retried as before).
 */
export class MicroBatcher<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  private running = 0;

  constructor(
    /** Writes one batch; answers one result per item, in order. */
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
    /** Batches written at once (a second one starts while the first waits on its commit). */
    private readonly maxRunning = 2,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.maxRunning || !this.waiting.length) return;
    this.scheduled = true;
    // setImmediate: every item handed in during this turn of the event loop joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running >= this.maxRunning || !this.waiting.length) return;
    const batch = this.waiting.splice(0, this.maxBatch);
    this.running++;
    try {
      const out = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(out[i]));
    } catch (error) {
      for (const b of batch) b.reject(error);
    } finally {
      this.running--;
      this.schedule();
    }
  }
}
