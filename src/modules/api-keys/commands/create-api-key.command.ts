import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import type { CredentialKind } from '../../../core/auth/principal';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ForbiddenError } from '../../../core/http/domain-errors';
import { newApiKeySecret } from '../domain/api-key-secret';
import { ApiKeyCreated, apiKeyDecider, apiKeyStream, NO_WORKSPACE } from '../domain/api-key';
import { assertManagesKeys } from '../domain/key-management.policy';

export class CreateApiKeyCommand {
  constructor(
    readonly accountUuid: string,
    /** The key that asks: the new key's scopes and expiry cannot exceed its own. */
    readonly issuerKeyId: string,
    readonly name: string,
    readonly scopes: string[],
    /** Absent: the default lifetime, no later than the issuer's expiry. */
    readonly expiresInDays: number | undefined,
    /** The asking credential's kind: only API keys manage keys (key-management.policy.ts). */
    readonly credentialKind: CredentialKind,
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
    assertManagesKeys(cmd.credentialKind);
    // The issuer's scopes and expiry as its own stream records them (the source of truth).
    const { state: issuer } = await this.repo.load(apiKeyStream(cmd.issuerKeyId), apiKeyDecider);
    if (!issuer.exists || issuer.revoked || issuer.accountUuid !== cmd.accountUuid)
      throw new ForbiddenError('Only a live API key of this account can create API keys');
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
        issuer: { scopes: issuer.scopes, expiresAt: issuer.expiresAt },
        prefix,
        secretHash: hash,
        now: new Date().toISOString(),
      },
    });
    return { key: (events[0] as ApiKeyCreated).data, secret };
  }
}
