import { DataSource, EntitySchema, MigrationInterface } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type EntityClass = Function | EntitySchema;
export type MigrationClass = new () => MigrationInterface;

export interface DataSourceOptions {
  url: string;
  entities: EntityClass[];
  migrations: MigrationClass[];
  poolSize?: number;
  applicationName?: string;
}

/**
 * The schema is built by migrations only (never synchronize). Each connection gets
 * a statement and idle-in-transaction timeout: an idle open transaction anywhere in
 * the cluster would hold back every event-store subscriber (see DESIGN.md).
 */
export function createDataSource(options: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'workspace-service',
      idle_in_transaction_session_timeout: 10_000,
    },
  });
}

export const DATA_SOURCE = Symbol('DATA_SOURCE');
