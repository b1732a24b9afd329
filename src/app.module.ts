import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ENTITIES } from './app.entities';
import { MIGRATIONS } from './app.migrations';
import { AuthGuard } from './core/auth/auth.guard';
import { AppConfig } from './core/config/config';
import { CoreModule } from './core/core.module';
import { HealthController } from './core/health/health.controller';
import { JsonLogger } from './core/logging/json-logger';
import { QueuesModule } from './core/queues/queues.module';
import { RateLimitModule } from './core/rate-limit/rate-limit.module';
import { SpineModule } from './core/spine.module';
import { ApiKeysModule } from './modules/api-keys/api-keys.module';
import { AuditModule } from './modules/audit/audit.module';
import { IdentityModule } from './modules/identity/identity.module';
import { RegistryModule } from './modules/registry/registry.module';
import { RolesModule } from './modules/roles/roles.module';
import { WorkspacesModule } from './modules/workspaces/workspaces.module';

/** The composition root: the spine plus every feature module. */
@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: JsonLogger,
    extraModules: DynamicModule['imports'] = [],
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot({ config, logger, entities: ENTITIES, migrations: MIGRATIONS }),
        SpineModule,
        RateLimitModule,
        QueuesModule.forRoot(config),
        RegistryModule,
        IdentityModule,
        WorkspacesModule,
        RolesModule,
        ApiKeysModule,
        AuditModule,
        ...extraModules,
      ],
      controllers: [HealthController],
      providers: [{ provide: APP_GUARD, useClass: AuthGuard }],
    };
  }
}
