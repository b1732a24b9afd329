import type { EntityClass, MigrationClass } from '../database/data-source';
import type { GuardedEventData } from '../events/guarded-event-data';
import type { PublicEventDefinition } from '../events/public-events';

/**
 * Read-model tables with `version` and `stream_revision` columns, the resources that
 * honour If-Match (core/http/preconditions.ts). Empty in core: each feature adds its own
 * tables by declaration merging next to its descriptor, so core names no feature's table
 * and pinnedRevision still only accepts declared ones (the name goes into SQL):
 *
 *   declare module '../../core/features/feature' {
 *     interface VersionedTables { members: true }
 *   }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface VersionedTables {}
export type VersionedTable = keyof VersionedTables & string;

/**
 * What core needs from a feature, declared on its Nest module with @Feature. The
 * composition root (app.module.ts) lists the feature modules once; entities, migrations
 * and the catalogue of public events are derived from that list. Projections and reactors
 * need no entry: core discovers them by their decorators among the module's providers.
 * Route scopes are declared on the routes (@RequireScope); their namespaces are the
 * spec's fixed list in core/auth/scopes.ts.
 */
export interface FeatureDescriptor {
  /** The feature's folder under src/modules. */
  name: string;
  /** TypeORM entities of its read models. */
  entities?: readonly EntityClass[];
  /** Its migrations; run in timestamp order together with everyone else's. */
  migrations?: readonly MigrationClass[];
  /** Its tables that carry a version (If-Match); their columns come from its own migrations. */
  versionedResources?: readonly VersionedTable[];
  /** The events it emits to the outside (event rules, webhooks): core/events/public-events.ts. */
  publicEvents?: readonly PublicEventDefinition[];
  /** Keys of its events' data the event history shows only with a scope: core/events/guarded-event-data.ts. */
  guardedEventData?: readonly GuardedEventData[];
}

const FEATURE = Symbol.for('core:feature');

/** Declares a Nest module as a feature (see FeatureDescriptor). */
export function Feature(descriptor: FeatureDescriptor): ClassDecorator {
  return (target) => {
    Object.defineProperty(target, FEATURE, { value: Object.freeze({ ...descriptor }), enumerable: false });
  };
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type FeatureModule = Function;

export function featureOf(module: FeatureModule): FeatureDescriptor {
  const descriptor = (module as unknown as Record<symbol, FeatureDescriptor | undefined>)[FEATURE];
  if (!descriptor) throw new Error(`${module.name} is not a feature: decorate it with @Feature({...})`);
  return descriptor;
}

export function entitiesOf(features: readonly FeatureModule[]): EntityClass[] {
  return features.flatMap((f) => featureOf(f).entities ?? []);
}

/** The 13-digit timestamp that ends a migration's class name (TypeORM's own convention). */
export function migrationTimestamp(migration: MigrationClass): number {
  const m = /(\d{13})$/.exec(migration.name);
  if (!m) throw new Error(`Migration ${migration.name}: its name must end with a 13-digit timestamp`);
  return Number(m[1]);
}

/**
 * Core's migrations and every feature's, oldest first. Sorting by timestamp keeps the
 * order of migrations already applied, whichever feature lists them; a new migration
 * takes a timestamp later than any shipped one.
 */
export function migrationsOf(
  core: readonly MigrationClass[],
  features: readonly FeatureModule[],
): MigrationClass[] {
  const all = [...core, ...features.flatMap((f) => featureOf(f).migrations ?? [])];
  const names = new Set<string>();
  for (const m of all) {
    if (names.has(m.name)) throw new Error(`Migration ${m.name} is listed twice`);
    names.add(m.name);
  }
  return all.sort((a, b) => migrationTimestamp(a) - migrationTimestamp(b));
}
