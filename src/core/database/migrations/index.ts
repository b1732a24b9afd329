import type { MigrationClass } from '../data-source';
import { Initial1764000000000 } from './1764000000000-initial';
import { EventStore1764000000100 } from './1764000000100-event-store';
import { Projections1764000000200 } from './1764000000200-projections';
import { ResourceVersions1764000005000 } from './1764000005000-resource-versions';
import { Claims1764000006000 } from './1764000006000-claims';

/** The spine's own migrations; features declare theirs with @Feature (core/features). */
export const CORE_MIGRATIONS: readonly MigrationClass[] = [
  Initial1764000000000,
  EventStore1764000000100,
  Projections1764000000200,
  ResourceVersions1764000005000,
  Claims1764000006000,
];
