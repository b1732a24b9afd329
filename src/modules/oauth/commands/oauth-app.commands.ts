import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { NO_WORKSPACE, oauthAppDecider, OAuthAppCommand } from '../domain/oauth-app';
import { ClientType, OAuthAppCreated, oauthAppStream } from '../domain/oauth.events';
import { CLIENT_SECRET_PREFIX, newClientId, newSecret } from '../domain/secrets';

export class CreateOAuthAppCommand {
  constructor(
    /** null: a client registering itself (RFC 7591), owned by no account. */
    readonly accountUuid: string | null,
    readonly name: string,
    readonly redirectUris: string[],
    readonly scopes: string[],
    readonly mcpServerUrl: string | null,
    readonly clientType: ClientType,
    readonly registeredDynamically = false,
  ) {}
}

export interface CreatedOAuthApp {
  app: OAuthAppCreated['data'];
  /** Confidential clients: the secret, returned this once and never stored. */
  clientSecret: string | null;
}

export class UpdateOAuthAppCommand {
  constructor(
    readonly accountUuid: string,
    readonly appId: string,
    readonly changes: { name?: string; redirectUris?: string[]; scopes?: string[] },
    /** If-Match: the app's stream revision the change was made against. */
    readonly expectedRevision?: bigint,
  ) {}
}

export class RotateOAuthAppSecretCommand {
  constructor(
    readonly accountUuid: string,
    readonly appId: string,
  ) {}
}

export class DeleteOAuthAppCommand {
  constructor(
    readonly accountUuid: string,
    readonly appId: string,
    readonly expectedRevision?: bigint,
  ) {}
}

@CommandHandler(CreateOAuthAppCommand)
export class CreateOAuthAppHandler implements ICommandHandler<CreateOAuthAppCommand, CreatedOAuthApp> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: CreateOAuthAppCommand): Promise<CreatedOAuthApp> {
    const appId = uuidv7();
    const secret = cmd.clientType === 'confidential' ? newSecret(CLIENT_SECRET_PREFIX) : undefined;
    const { events } = await this.repo.handle({
      streamName: oauthAppStream(appId),
      workspaceId: NO_WORKSPACE,
      decider: oauthAppDecider,
      command: {
        type: 'CreateOAuthApp',
        appId,
        clientId: newClientId(),
        accountUuid: cmd.accountUuid,
        name: cmd.name,
        redirectUris: cmd.redirectUris,
        scopes: cmd.scopes,
        mcpServerUrl: cmd.mcpServerUrl,
        clientType: cmd.clientType,
        secretHash: secret?.hash ?? null,
        registeredDynamically: cmd.registeredDynamically,
        now: new Date().toISOString(),
      },
    });
    return { app: (events[0] as OAuthAppCreated).data, clientSecret: secret?.secret ?? null };
  }
}

@CommandHandler(UpdateOAuthAppCommand)
export class UpdateOAuthAppHandler implements ICommandHandler<UpdateOAuthAppCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: UpdateOAuthAppCommand): Promise<void> {
    await run(this.repo, cmd.appId, cmd.expectedRevision, {
      type: 'UpdateOAuthApp',
      accountUuid: cmd.accountUuid,
      ...cmd.changes,
      now: new Date().toISOString(),
    });
  }
}

@CommandHandler(RotateOAuthAppSecretCommand)
export class RotateOAuthAppSecretHandler implements ICommandHandler<RotateOAuthAppSecretCommand, string> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: RotateOAuthAppSecretCommand): Promise<string> {
    const secret = newSecret(CLIENT_SECRET_PREFIX);
    await run(this.repo, cmd.appId, undefined, {
      type: 'RotateOAuthAppSecret',
      accountUuid: cmd.accountUuid,
      secretHash: secret.hash,
      now: new Date().toISOString(),
    });
    return secret.secret;
  }
}

/** Deleting an app revokes every grant, and so every token, it has (the projection, one commit). */
@CommandHandler(DeleteOAuthAppCommand)
export class DeleteOAuthAppHandler implements ICommandHandler<DeleteOAuthAppCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: DeleteOAuthAppCommand): Promise<void> {
    await run(this.repo, cmd.appId, cmd.expectedRevision, {
      type: 'DeleteOAuthApp',
      accountUuid: cmd.accountUuid,
      now: new Date().toISOString(),
    });
  }
}

async function run(
  repo: EventSourcedRepository,
  appId: string,
  expectedRevision: bigint | undefined,
  command: OAuthAppCommand,
): Promise<void> {
  await repo.handle({
    streamName: oauthAppStream(appId),
    workspaceId: NO_WORKSPACE,
    decider: oauthAppDecider,
    expectedRevision,
    command,
  });
}
