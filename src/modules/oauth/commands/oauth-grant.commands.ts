import { CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ForbiddenError } from '../../../core/http/domain-errors';
import { ListMembershipsOfAccountQuery } from '../../identity';
import { oauthGrantDecider } from '../domain/oauth-grant';
import { GrantRevocationReason, oauthGrantStream } from '../domain/oauth.events';

export class ApproveOAuthGrantCommand {
  constructor(
    readonly app: { appId: string; clientId: string; scopes: string[] },
    readonly accountUuid: string,
    readonly workspaceId: string,
    readonly scopes: string[],
  ) {}
}

export class RevokeOAuthGrantCommand {
  constructor(
    readonly grantId: string,
    readonly reason: GrantRevocationReason,
  ) {}
}

/**
 * The person approved the app in a workspace: they must be an active member there (an
 * app cannot be let into a workspace its user cannot enter). Answers the new grant's id.
 */
@CommandHandler(ApproveOAuthGrantCommand)
export class ApproveOAuthGrantHandler implements ICommandHandler<ApproveOAuthGrantCommand, string> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
  ) {}

  async execute(cmd: ApproveOAuthGrantCommand): Promise<string> {
    const workspaces = await this.queries.execute<ListMembershipsOfAccountQuery, string[]>(
      new ListMembershipsOfAccountQuery(cmd.accountUuid),
    );
    if (!workspaces.includes(cmd.workspaceId))
      throw new ForbiddenError('workspace: you are not a member of this workspace');
    const grantId = uuidv7();
    await this.repo.handle({
      streamName: oauthGrantStream(grantId),
      // Filed under the workspace the app may now act in, for its auditors.
      workspaceId: cmd.workspaceId,
      decider: oauthGrantDecider,
      command: {
        type: 'ApproveOAuthGrant',
        grantId,
        appId: cmd.app.appId,
        clientId: cmd.app.clientId,
        accountUuid: cmd.accountUuid,
        workspaceId: cmd.workspaceId,
        requestedScopes: cmd.scopes,
        appScopes: cmd.app.scopes,
        now: new Date().toISOString(),
      },
    });
    return grantId;
  }
}

@CommandHandler(RevokeOAuthGrantCommand)
export class RevokeOAuthGrantHandler implements ICommandHandler<RevokeOAuthGrantCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: RevokeOAuthGrantCommand): Promise<void> {
    const loaded = await this.repo.load(oauthGrantStream(cmd.grantId), oauthGrantDecider);
    if (!loaded.exists) return;
    await this.repo.handle({
      streamName: oauthGrantStream(cmd.grantId),
      workspaceId: loaded.state.workspaceId,
      decider: oauthGrantDecider,
      loaded: { state: loaded.state, revision: loaded.revision },
      command: { type: 'RevokeOAuthGrant', reason: cmd.reason, now: new Date().toISOString() },
    });
  }
}
