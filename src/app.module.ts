import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthGuard } from './core/auth/auth.guard';
import { AppConfig } from './core/config/config';
import { CoreModule } from './core/core.module';
import { CORE_MIGRATIONS } from './core/database/migrations';
import { PublicEventsModule } from './core/events/public-events.module';
import { entitiesOf, FeatureModule, migrationsOf } from './core/features/feature';
import { HealthController } from './core/health/health.controller';
import { JsonLogger } from './core/logging/json-logger';
import { QueuesModule } from './core/queues/queues.module';
import { RateLimitModule } from './core/rate-limit/rate-limit.module';
import { SpineModule } from './core/spine.module';
import { ApiKeysModule } from './modules/api-keys/api-keys.module';
import { AssistantModule } from './modules/assistant/assistant.module';
import { AutomationModule } from './modules/automation/automation.module';
import { AuditModule } from './modules/audit/audit.module';
import { CalendarsModule } from './modules/calendars/calendars.module';
import { FilesModule } from './modules/files/files.module';
import { IdentityModule } from './modules/identity/identity.module';
import { RecordsModule } from './modules/records/records.module';
import { MessagingModule } from './modules/messaging/messaging.module';
import { McpModule } from './modules/mcp/mcp.module';
import { OAuthModule } from './modules/oauth/oauth.module';
import { RegistryModule } from './modules/registry/registry.module';
import { RolesModule } from './modules/roles/roles.module';
import { SummariesModule } from './modules/summaries/summaries.module';
import { ToolkitsModule } from './modules/toolkits/toolkits.module';
import { McpServersModule } from './modules/mcp-servers/mcp-servers.module';
import { WorkModule } from './modules/work/work.module';
import { WorkspacesModule } from './modules/workspaces/workspaces.module';

/**
 * Every feature, once. Each declares what core needs from it with @Feature (entities,
 * migrations, versioned resources, public events); adding a feature adds its module here and nothing
 * else outside its folder.
 */
export const FEATURES = [
  RegistryModule,
  IdentityModule,
  WorkspacesModule,
  RolesModule,
  ApiKeysModule,
  AuditModule,
  WorkModule,
  CalendarsModule,
  FilesModule,
  AutomationModule,
  RecordsModule,
  MessagingModule,
  OAuthModule,
  ToolkitsModule,
  McpModule,
  McpServersModule,
  SummariesModule,
  AssistantModule,
] as const satisfies readonly FeatureModule[];

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
        CoreModule.forRoot({
          config,
          logger,
          entities: entitiesOf(FEATURES),
          migrations: migrationsOf(CORE_MIGRATIONS, FEATURES),
        }),
        SpineModule,
        RateLimitModule,
        QueuesModule.forRoot(config),
        PublicEventsModule.forFeatures(FEATURES),
        ...FEATURES,
        ...extraModules,
      ],
      controllers: [HealthController],
      providers: [{ provide: APP_GUARD, useClass: AuthGuard }],
    };
  }
}
