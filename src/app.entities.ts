import { FEATURES } from './app.module';
import { EntityClass } from './core/database/data-source';
import { entitiesOf } from './core/features/feature';

/** Every TypeORM entity (read models), as the features declare them (@Feature). */
export const ENTITIES: EntityClass[] = entitiesOf(FEATURES);
