import type { AppConfig } from '../config/config';
import type { EventStore } from './event-store.port';

/**
 * Picks the adapter named by EVENT_STORE. Adapters are loaded lazily so a process on
 * PostgreSQL never loads the gRPC client, and the EventStoreDB client stays confined
 * to its folder.
 */
export async function createEventStore(config: AppConfig): Promise<EventStore> {
  if (config.eventStore === 'eventstoredb') {
    const { EventStoreDbEventStore } = await import('./eventstoredb/eventstoredb-event-store');
    return new EventStoreDbEventStore({ connectionString: config.eventStoreConnectionString! });
  }
  const { PostgresEventStore } = await import('./postgres/postgres-event-store');
  return new PostgresEventStore({ connectionString: config.databaseUrl, poolSize: config.databasePoolSize });
}
