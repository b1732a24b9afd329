import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { ApiKeysTable1764000002020 } from './api-keys-table.migration';
import { ApiKeyUsage1764000004100 } from './api-keys.migration';
import { ApiKeyCredentialResolver } from './auth/api-key-credential.resolver';
import { CreateApiKeyHandler } from './commands/create-api-key.command';
import { CreateRootApiKeyHandler } from './commands/create-root-api-key.command';
import { RevokeApiKeyHandler } from './commands/revoke-api-key.command';
import { ApiKeysController } from './http/api-keys.controller';
import { ApiKeyEntity } from './projections/api-key.entity';
import { ApiKeysProjection } from './projections/api-keys.projection';
import { GetApiKeyHandler, ListApiKeysHandler } from './queries/api-key.queries';

/** Account API keys (/me/api-keys) and the resolver of `wsk_` bearer tokens. */
@Feature({
  name: 'api-keys',
  entities: [ApiKeyEntity],
  migrations: [ApiKeysTable1764000002020, ApiKeyUsage1764000004100],
})
@Module({
  controllers: [ApiKeysController],
  providers: [
    ApiKeysProjection,
    ApiKeyCredentialResolver,
    CreateApiKeyHandler,
    CreateRootApiKeyHandler,
    RevokeApiKeyHandler,
    ListApiKeysHandler,
    GetApiKeyHandler,
  ],
})
export class ApiKeysModule {}
