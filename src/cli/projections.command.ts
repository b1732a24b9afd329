import { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../app.module';
import { AppConfig } from '../core/config/config';
import {
  EVENT_STORE,
  EventFilter,
  EventStore,
  encodePosition,
  Position,
} from '../core/event-store/event-store.port';
import { JsonLogger } from '../core/logging/json-logger';
import { filterOf, ProjectionRebuilder, rebuildCheckpointFor } from '../core/projections/rebuild';
import { SubscriberRegistry } from '../core/projections/subscriber-registry';
import type { CliCommand } from './commands';
import { UsageError } from './args';

/** Past this many events behind, `status` stops counting and says so. */
const LAG_COUNT_LIMIT = 100_000;

export const PROJECTIONS_USAGE = `  projections status [--json]                          each projection's and reactor's checkpoint and lag
  projections rebuild <name|all> [--batch-size <n>]    replay into fresh tables, swap them in when caught up`;

/**
 * An application context with ROLE=api: the registry knows every projection and
 * reactor, but the CLI process runs none of them and consumes no job, so it never
 * competes with the service for leadership.
 */
async function withSpineContext<T>(
  config: AppConfig,
  extraModules: DynamicModule['imports'],
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const logger = new JsonLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot({ ...config, role: 'api' }, logger, extraModules),
    { logger, abortOnError: false },
  );
  await app.init();
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

export interface SubscriberStatus {
  name: string;
  kind: 'projection' | 'reactor' | 'rebuild';
  /** encodePosition of the checkpoint; null before the first batch. */
  checkpoint: string | null;
  /** Matching events after the checkpoint (at most LAG_COUNT_LIMIT; see lagCapped). */
  lag: number;
  lagCapped: boolean;
  eventsHandled: number;
  updatedAt: string | null;
}

interface CheckpointRow {
  name: string;
  kind: SubscriberStatus['kind'];
  position_commit: string;
  position_prepare: string;
  events_handled: string;
  updated_at: Date;
}

async function countAfter(
  store: EventStore,
  after: Position | undefined,
  filter: EventFilter | undefined,
): Promise<{ lag: number; capped: boolean }> {
  let lag = 0;
  let cursor = after;
  while (lag < LAG_COUNT_LIMIT) {
    const batch = await store.readAll({
      after: cursor,
      maxCount: Math.min(5000, LAG_COUNT_LIMIT - lag),
      filter,
    });
    if (!batch.length) return { lag, capped: false };
    lag += batch.length;
    cursor = batch[batch.length - 1].position;
  }
  const more = await store.readAll({ after: cursor, maxCount: 1, filter });
  return { lag, capped: more.length > 0 };
}

export async function subscriberStatus(app: INestApplicationContext): Promise<SubscriberStatus[]> {
  const registry = app.get(SubscriberRegistry);
  const store = app.get<EventStore>(EVENT_STORE);
  const rows = (await app
    .get(DataSource)
    .query(
      'SELECT name, kind, position_commit, position_prepare, events_handled, updated_at FROM subscriber_checkpoints',
    )) as CheckpointRow[];
  const byName = new Map(rows.map((r) => [r.name, r]));
  const subscribers = [
    ...registry
      .projections()
      .map((p) => ({ name: p.definition.name, kind: 'projection' as const, filter: filterOf(p) })),
    ...registry.reactors().map((r) => ({
      name: r.definition.name,
      kind: 'reactor' as const,
      filter: { eventTypes: r.definition.eventTypes },
    })),
    // A rebuild in progress (or one that died: the next rebuild starts over).
    ...registry
      .projections()
      .filter((p) => byName.has(rebuildCheckpointFor(p.definition.name)))
      .map((p) => ({
        name: rebuildCheckpointFor(p.definition.name),
        kind: 'rebuild' as const,
        filter: filterOf(p),
      })),
  ];
  const out: SubscriberStatus[] = [];
  for (const s of subscribers) {
    const row = byName.get(s.name);
    const position =
      row && (row.position_commit !== '0' || row.position_prepare !== '0')
        ? { commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) }
        : undefined;
    const { lag, capped } = await countAfter(store, position, s.filter);
    out.push({
      name: s.name,
      kind: s.kind,
      checkpoint: position ? encodePosition(position) : null,
      lag,
      lagCapped: capped,
      eventsHandled: row ? Number(row.events_handled) : 0,
      updatedAt: row ? new Date(row.updated_at).toISOString() : null,
    });
  }
  return out;
}

function table(statuses: SubscriberStatus[]): string[] {
  const rows = [
    ['NAME', 'KIND', 'CHECKPOINT', 'LAG', 'HANDLED', 'UPDATED'],
    ...statuses.map((s) => [
      s.name,
      s.kind,
      s.checkpoint ?? '-',
      s.lag === 0 ? '0 (at head)' : `${s.lag}${s.lagCapped ? '+' : ''}`,
      String(s.eventsHandled),
      s.updatedAt ?? '-',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** `projections status` and `projections rebuild`; extraModules lets tests add their own projections. */
export function projectionsCommand(extraModules: DynamicModule['imports'] = []): CliCommand {
  return async (args, config, out) => {
    const [sub, target] = args.positionals;
    if (sub === 'status') {
      const statuses = await withSpineContext(config, extraModules, subscriberStatus);
      if (args.flags.json) out(JSON.stringify(statuses));
      else table(statuses).forEach(out);
      return;
    }
    if (sub === 'rebuild') {
      if (!target) throw new UsageError('projections rebuild needs a projection name, or all');
      const batchFlag = args.flags['batch-size'];
      const batchSize = typeof batchFlag === 'string' ? Number(batchFlag) : config.projectionBatchSize;
      if (!Number.isInteger(batchSize) || batchSize < 1)
        throw new UsageError('--batch-size must be a positive integer');
      await withSpineContext(config, extraModules, async (app) => {
        const registry = app.get(SubscriberRegistry);
        const known = registry.projections().map((p) => p.definition.name);
        if (target !== 'all' && !known.includes(target)) {
          throw new UsageError(`Unknown projection "${target}"; projections: ${known.join(', ')}`);
        }
        const rebuilder = new ProjectionRebuilder(app.get(DataSource), app.get<EventStore>(EVENT_STORE));
        for (const p of registry
          .projections()
          .filter((p) => target === 'all' || p.definition.name === target)) {
          const result = await rebuilder.rebuild(p, { batchSize, onProgress: out });
          out(`Rebuilt ${result.projection}: ${result.events} events in ${result.ms} ms`);
        }
      });
      return;
    }
    throw new UsageError(
      sub ? `Unknown projections command "${sub}"` : 'projections needs a command: status or rebuild',
    );
  };
}

export const projections = projectionsCommand();
