import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { RegistryController } from './registry.controller';

/** The static resource registry: no tables. */
@Feature({ name: 'registry' })
@Module({ controllers: [RegistryController] })
export class RegistryModule {}
