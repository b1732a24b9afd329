import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { apiKeyDecider, apiKeyStream, NO_WORKSPACE } from '../domain/api-key';

export class RevokeApiKeyCommand {
  constructor(
    readonly accountUuid: string,
    readonly keyId: string,
  ) {}
}

/** Revocation applies to the next request: the resolver reads the read model, which the response waits for. */
@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: RevokeApiKeyCommand): Promise<void> {
    await this.repo.handle({
      streamName: apiKeyStream(cmd.keyId),
      workspaceId: NO_WORKSPACE,
      decider: apiKeyDecider,
      command: {
        type: 'RevokeApiKey',
        keyId: cmd.keyId,
        accountUuid: cmd.accountUuid,
        now: new Date().toISOString(),
      },
    });
  }
}
