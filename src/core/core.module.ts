import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from './config/config';
import { createDataSource, EntityClass, MigrationClass } from './database/data-source';
import { ensureDatabase } from './database/ensure-database';
import { runMigrationsLocked } from './database/migrate';
import { createEventStore } from './event-store/event-store.factory';
import { EVENT_STORE, EventStore } from './event-store/event-store.port';
import { JsonLogger } from './logging/json-logger';
import { createRedis, REDIS } from './redis/redis';

/** Closes the shared connections after every module has stopped its own work. */
@Injectable()
class CoreShutdown implements OnApplicationShutdown {
  constructor(
    private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.eventStore.close().catch(() => undefined);
    if (this.db.isInitialized) await this.db.destroy().catch(() => undefined);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export interface CoreOptions {
  config: AppConfig;
  logger: JsonLogger;
  entities: EntityClass[];
  migrations: MigrationClass[];
}

/** The spine's shared connections: configuration, logger, PostgreSQL, Redis, event store. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const { config, logger } = options;
    return {
      module: CoreModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        {
          provide: DataSource,
          useFactory: async () => {
            await ensureDatabase(config.databaseUrl);
            const ds = createDataSource({
              url: config.databaseUrl,
              poolSize: config.databasePoolSize,
              entities: options.entities,
              migrations: options.migrations,
            });
            await ds.initialize();
            const applied = await runMigrationsLocked(ds);
            if (applied.length) logger.event('info', { msg: 'migrations applied', migrations: applied });
            return ds;
          },
        },
        { provide: REDIS, useFactory: () => createRedis(config.redisUrl) },
        // Depends on DataSource so the event-store tables exist before the adapter is used.
        { provide: EVENT_STORE, useFactory: () => createEventStore(config), inject: [DataSource] },
        CoreShutdown,
      ],
      exports: [APP_CONFIG, JsonLogger, DataSource, REDIS, EVENT_STORE],
    };
  }
}
