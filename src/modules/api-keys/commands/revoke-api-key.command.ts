import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CredentialKind } from '../../../core/auth/principal';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { assertManagesKeys } from '../domain/key-management.policy';
import { apiKeyDecider, apiKeyStream, NO_WORKSPACE } from '../domain/api-key';

export class RevokeApiKeyCommand {
  constructor(
    readonly accountUuid: string,
    readonly keyId: string,
    /** The asking credential's kind: only API keys manage keys (key-management.policy.ts). */
    readonly credentialKind: CredentialKind,
  ) {}
}

/** Revocation applies to the next request: the resolver reads the read model, which the response waits for. */
@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: RevokeApiKeyCommand): Promise<void> {
    assertManagesKeys(cmd.credentialKind);
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
