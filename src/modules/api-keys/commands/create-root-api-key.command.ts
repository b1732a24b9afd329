import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { ACCOUNT_ADMIN, ALL_SCOPES } from '../../../core/auth/scopes';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { API_KEY_MAX_DAYS } from '../domain/api-key';
import { ApiKeyCreated, apiKeyStream } from '../domain/api-key.events';
import { newApiKeySecret } from '../domain/api-key-secret';

/**
 * An account's root credential, created with its first workspace (bootstrap): every
 * workspace scope and account:admin to manage its keys. There is no issuing key to be
 * bounded by, which is why only the bootstrap composes this command (no route does).
 */
export class CreateRootApiKeyCommand {
  constructor(
    readonly accountUuid: string,
    /** The workspace it was created with: its envelope files it there for the auditors. */
    readonly workspaceId: string,
    readonly name = 'bootstrap',
  ) {}
}

export interface CreatedRootApiKey {
  keyId: string;
  /** The full secret: returned this once, never stored or logged. */
  secret: string;
}

@CommandHandler(CreateRootApiKeyCommand)
export class CreateRootApiKeyHandler implements ICommandHandler<CreateRootApiKeyCommand, CreatedRootApiKey> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: CreateRootApiKeyCommand): Promise<CreatedRootApiKey> {
    const { prefix, secret, hash } = newApiKeySecret();
    const keyId = uuidv7();
    const now = new Date();
    const key: ApiKeyCreated = {
      type: 'ApiKeyCreated',
      data: {
        keyId,
        accountUuid: cmd.accountUuid,
        name: cmd.name,
        prefix,
        secretHash: hash,
        scopes: [...ALL_SCOPES, ACCOUNT_ADMIN],
        createdAt: now.toISOString(),
        // The longest a key may live: keys cannot outlive the key that creates them, so a
        // shorter root key would cap every key of the account below it.
        expiresAt: new Date(now.getTime() + API_KEY_MAX_DAYS * 86_400_000).toISOString(),
      },
    };
    await this.repo.append(apiKeyStream(keyId), cmd.workspaceId, [key], 'no_stream');
    return { keyId, secret };
  }
}
