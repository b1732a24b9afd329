import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { EventStore } from '../event-store/event-store.port';
import type { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import type { Claims } from './claims';
import { InMemoryClaims } from './memory-claims';
import { PostgresClaims } from './postgres-claims';
import { StreamClaims } from './stream-claims';

/**
 * The claims adapter that matches the event store: a table in the append's transaction
 * on PostgreSQL (on the TypeORM pool, the database of the events), claim streams on
 * EventStoreDB, a map in memory.
 */
export function createClaims(store: EventStore, db: DataSource): Claims {
  switch (store.kind) {
    case 'postgres':
      return new PostgresClaims(
        store as PostgresEventStore,
        (db.driver as unknown as { master: Pool }).master,
      );
    case 'eventstoredb':
      return new StreamClaims(store);
    case 'memory':
      return new InMemoryClaims(store);
  }
}
