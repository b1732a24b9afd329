/**
 * The api-keys feature's public surface: what other features may use. Everything else
 * under modules/api-keys is internal (src/app.features.spec.ts enforces it).
 */
export { CreateApiKeyCommand } from './commands/create-api-key.command';
export type { CreatedApiKey } from './commands/create-api-key.command';
export { CreateRootApiKeyCommand } from './commands/create-root-api-key.command';
export type { CreatedRootApiKey } from './commands/create-root-api-key.command';
export { RevokeApiKeyCommand } from './commands/revoke-api-key.command';
export { apiKeyStream } from './domain/api-key.events';
export type { ApiKeyCreated, ApiKeyRevoked } from './domain/api-key.events';
