import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import {
  CommandBus,
  CommandHandler,
  ICommandHandler,
  IQueryHandler,
  QueryBus,
  QueryHandler,
} from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { EventSourcedRepository } from '../../src/core/cqrs/event-sourced-repository';
import { RequestContext, requestContext, SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../src/core/projections/projection';
import { startTestApp, TestApp } from '../support/app';

/**
 * Read-your-writes is one mechanism (core/cqrs/read-your-writes.ts): what a request
 * dispatches through the QueryBus or the CommandBus after it appended waits for the
 * projections first. A projection held behind a gate shows it: a read dispatched after
 * the write sees the row only because the dispatch waited for the projection to commit it.
 */

const PROBE_EVENT = 'ReadYourWritesProbeWritten';
let gate: { open: () => void; opened: Promise<void> };
function closeGate(): void {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gate = { open, opened };
}

@Injectable()
class ProbeTable implements OnModuleInit {
  constructor(private readonly db: DataSource) {}
  async onModuleInit(): Promise<void> {
    await this.db.query('CREATE TABLE IF NOT EXISTS ryw_probe (id uuid PRIMARY KEY)');
  }
}

/** Commits a probe's row only once the test opens the gate. */
@Injectable()
@Projection({ name: 'ryw-probe', eventTypes: [PROBE_EVENT], tables: ['ryw_probe'] })
class ProbeProjection implements ProjectionHandler {
  async handle(event: StoredEvent, em: EntityManager): Promise<void> {
    await gate.opened;
    await em.query('INSERT INTO ryw_probe (id) VALUES ($1) ON CONFLICT DO NOTHING', [
      (event.data as { id: string }).id,
    ]);
  }
}

const countRows = async (db: DataSource, id: string): Promise<number> =>
  ((await db.query('SELECT count(*)::int AS n FROM ryw_probe WHERE id = $1', [id])) as { n: number }[])[0].n;

class ReadProbe {
  constructor(readonly id: string) {}
}

@QueryHandler(ReadProbe)
class ReadProbeHandler implements IQueryHandler<ReadProbe, number> {
  constructor(private readonly db: DataSource) {}
  execute(q: ReadProbe): Promise<number> {
    return countRows(this.db, q.id);
  }
}

/** Appends the probe event; returns what a query dispatched inside the handler saw. */
class WriteProbe {
  constructor(readonly id: string) {}
}

@CommandHandler(WriteProbe)
class WriteProbeHandler implements ICommandHandler<WriteProbe, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
  ) {}
  async execute(c: WriteProbe): Promise<number> {
    await this.repo.append(
      `rywprobe-${c.id}`,
      randomUUID(),
      [{ type: PROBE_EVENT, data: { id: c.id } }],
      'no_stream',
    );
    return this.queries.execute(new ReadProbe(c.id));
  }
}

/** A command that decides on the read model (as setting a new role as the default does). */
class DecideOnProbe {
  constructor(readonly id: string) {}
}

@CommandHandler(DecideOnProbe)
class DecideOnProbeHandler implements ICommandHandler<DecideOnProbe, number> {
  constructor(private readonly db: DataSource) {}
  execute(c: DecideOnProbe): Promise<number> {
    return countRows(this.db, c.id);
  }
}

@Module({
  providers: [ProbeTable, ProbeProjection, ReadProbeHandler, WriteProbeHandler, DecideOnProbeHandler],
})
class ProbeModule {}

describe('read-your-writes through the buses (e2e)', () => {
  let t: TestApp;
  let commands: CommandBus;
  let queries: QueryBus;
  beforeAll(async () => {
    t = await startTestApp({ extraModules: [ProbeModule] });
    commands = t.app.get(CommandBus);
    queries = t.app.get(QueryBus);
  });
  afterAll(async () => {
    gate?.open();
    await t.close();
  });

  const inRequest = <T>(fn: () => Promise<T>): Promise<T> => {
    const ctx: RequestContext = { requestId: `ryw-${randomUUID()}`, actor: SYSTEM_ACTOR, appended: [] };
    return requestContext.run(ctx, fn);
  };

  it('a query dispatched after the request appended sees the write; one inside the writing handler does not wait', async () => {
    closeGate();
    const id = randomUUID();
    const seen = await inRequest(async () => {
      const insideHandler = await commands.execute<WriteProbe, number>(new WriteProbe(id));
      gate.open();
      const afterWrite = await queries.execute<ReadProbe, number>(new ReadProbe(id));
      return { insideHandler, afterWrite };
    });
    expect(seen).toEqual({ insideHandler: 0, afterWrite: 1 });
  });

  it('a command dispatched after the request appended decides on a read model that has the write', async () => {
    closeGate();
    const id = randomUUID();
    const seen = await inRequest(async () => {
      await commands.execute(new WriteProbe(id));
      gate.open();
      return commands.execute<DecideOnProbe, number>(new DecideOnProbe(id));
    });
    expect(seen).toBe(1);
  });

  it('outside a request (CLI, projections) nothing waits', async () => {
    closeGate();
    const id = randomUUID();
    // No request context: nothing is recorded, so the read answers at once, gate closed.
    await t.app
      .get(EventSourcedRepository)
      .append(`rywprobe-${id}`, randomUUID(), [{ type: PROBE_EVENT, data: { id } }], 'no_stream');
    expect(await queries.execute<ReadProbe, number>(new ReadProbe(id))).toBe(0);
    gate.open();
  });
});
