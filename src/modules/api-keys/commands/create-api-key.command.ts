import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { newApiKeySecret } from '../../identity/domain/api-key-secret';
import { ApiKeyCreated, apiKeyDecider, apiKeyStream, NO_WORKSPACE } from '../domain/api-key';

export class CreateApiKeyCommand {
  constructor(
    readonly accountUuid: string,
    readonly name: string,
    readonly scopes: string[],
    readonly expiresInDays: number,
  ) {}
}

export interface CreatedApiKey {
  key: ApiKeyCreated['data'];
  /** The full secret: returned to the caller this once, never stored. */
  secret: string;
}

@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand, CreatedApiKey> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const keyId = uuidv7();
    const { prefix, secret, hash } = newApiKeySecret();
    const { events } = await this.repo.handle({
      streamName: apiKeyStream(keyId),
      workspaceId: NO_WORKSPACE,
      decider: apiKeyDecider,
      command: {
        type: 'CreateApiKey',
        keyId,
        accountUuid: cmd.accountUuid,
        name: cmd.name,
        scopes: cmd.scopes,
        expiresInDays: cmd.expiresInDays,
        prefix,
        secretHash: hash,
        now: new Date().toISOString(),
      },
    });
    return { key: (events[0] as ApiKeyCreated).data, secret };
  }
}
