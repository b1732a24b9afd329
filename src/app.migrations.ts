import { FEATURES } from './app.module';
import { MigrationClass } from './core/database/data-source';
import { CORE_MIGRATIONS } from './core/database/migrations';
import { migrationsOf } from './core/features/feature';

/** Every migration, oldest first: the spine's and those the features declare (@Feature). */
export const MIGRATIONS: MigrationClass[] = migrationsOf(CORE_MIGRATIONS, FEATURES);
