import { Controller, HttpCode, Injectable, Module, OnModuleInit, Param, Post } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Public, SelfAccess } from '../../src/core/auth/auth.decorators';
import { EventSourcedRepository } from '../../src/core/cqrs/event-sourced-repository';
import { SkipReadYourWrites } from '../../src/core/cqrs/read-your-writes';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { ConflictError } from '../../src/core/http/domain-errors';
import { Projection, ProjectionHandler } from '../../src/core/projections/projection';
import { startTestApp, TestApp, TestResponse } from '../support/app';

/**
 * Read-your-writes now waits in a Fastify onSend hook (core/cqrs/request-context.hooks.ts):
 * every kind of answer a write can end in must still wait for the projections, and a route
 * marked @SkipReadYourWrites must not. A gated projection shows it: an answer that arrives
 * while the gate is shut did not wait.
 */
const PROBE_EVENT = 'AttackWritePathProbeWritten';
let gate = { open: () => undefined as void, opened: Promise.resolve() };
function closeGate(): void {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gate = { open, opened };
}

@Injectable()
class ProbeTable implements OnModuleInit {
  constructor(private readonly db: DataSource) {}
  async onModuleInit(): Promise<void> {
    await this.db.query('CREATE TABLE IF NOT EXISTS attack_wp_probe (id uuid PRIMARY KEY)');
  }
}

@Injectable()
@Projection({ name: 'attack-wp-probe', eventTypes: [PROBE_EVENT], tables: ['attack_wp_probe'] })
class ProbeProjection implements ProjectionHandler {
  async handle(event: StoredEvent, em: EntityManager): Promise<void> {
    await gate.opened;
    await em.query('INSERT INTO attack_wp_probe (id) VALUES ($1) ON CONFLICT DO NOTHING', [
      (event.data as { id: string }).id,
    ]);
  }
}

@Controller('attack-wp')
class ProbeController {
  constructor(private readonly repo: EventSourcedRepository) {}
  private write(id: string) {
    return this.repo.append(
      `attackwp-${id}`,
      randomUUID(),
      [{ type: PROBE_EVENT, data: { id } }],
      'no_stream',
    );
  }

  @Post(':id/no-content')
  @SelfAccess()
  @HttpCode(204)
  async noContent(@Param('id') id: string): Promise<void> {
    await this.write(id);
  }

  @Post(':id/refused')
  @SelfAccess()
  async refused(@Param('id') id: string): Promise<void> {
    await this.write(id);
    throw new ConflictError('refused after the write');
  }

  @Post(':id/crash')
  @SelfAccess()
  async crash(@Param('id') id: string): Promise<void> {
    await this.write(id);
    throw new Error('a bug after the write');
  }

  @Post(':id/public')
  @Public()
  async open(@Param('id') id: string): Promise<{ ok: true }> {
    await this.write(id);
    return { ok: true };
  }

  @Post(':id/skip')
  @SelfAccess()
  @SkipReadYourWrites()
  async skip(@Param('id') id: string): Promise<{ ok: true }> {
    await this.write(id);
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController], providers: [ProbeTable, ProbeProjection] })
class ProbeModule {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('attack: read-your-writes on every kind of answer (e2e)', () => {
  let t: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    t = await startTestApp({ extraModules: [ProbeModule] });
    ({ apiKey } = await t.bootstrap());
  });
  afterAll(async () => {
    gate.open();
    await t.close();
  });

  const rows = async (id: string): Promise<number> =>
    (
      (await t.app
        .get(DataSource)
        .query('SELECT count(*)::int AS n FROM attack_wp_probe WHERE id = $1', [id])) as { n: number }[]
    )[0].n;

  /** Sends the write with the gate shut; whether it answered before the gate opened. */
  async function gated(
    route: string,
    token?: string,
  ): Promise<{ early: boolean; res: TestResponse; id: string }> {
    const id = randomUUID();
    closeGate();
    let answered = false;
    const pending = t
      .request('POST', `/attack-wp/${id}/${route}`, {
        token,
        headers: token ? { 'Idempotency-Key': randomUUID() } : {},
      })
      .then((res) => {
        answered = true;
        return res;
      });
    await sleep(400);
    const early = answered;
    gate.open();
    const res = await pending;
    return { early, res, id };
  }

  it.each([
    ['no-content', 204],
    ['refused', 409],
    ['crash', 500],
  ])('a %s answer (%i) waits for the projections of what the handler appended', async (route, status) => {
    const { early, res, id } = await gated(route, apiKey);
    expect(res.status).toBe(status);
    expect(early).toBe(false);
    expect(await rows(id)).toBe(1);
    expect(res.headers.get('etag')).toBeNull();
  });

  it('a duplicate of a keyed write arriving during its wait is answered only once the projections passed it', async () => {
    const id = randomUUID();
    const key = randomUUID();
    closeGate();
    const answered: string[] = [];
    const send = (name: string) =>
      t
        .request('POST', `/attack-wp/${id}/no-content`, {
          token: apiKey,
          headers: { 'Idempotency-Key': key },
        })
        .then((res) => {
          answered.push(name);
          return res;
        });
    const first = send('first');
    await sleep(150);
    const duplicate = send('duplicate');
    await sleep(400);
    expect(answered).toEqual([]);
    gate.open();
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.status).toBe(204);
    expect(b.status).toBe(204);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await rows(id)).toBe(1);
    expect(await t.eventsOf(b)).toEqual([]);
  });

  it('a public route waits too', async () => {
    const { early, res, id } = await gated('public');
    expect(res.status).toBe(201);
    expect(early).toBe(false);
    expect(await rows(id)).toBe(1);
  });

  it('a route marked @SkipReadYourWrites answers without waiting', async () => {
    const { early, res } = await gated('skip', apiKey);
    expect(res.status).toBe(201);
    expect(early).toBe(true);
  });
});
