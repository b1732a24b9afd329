import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Credential } from '../../../core/auth/principal';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ForbiddenError } from '../../../core/http/domain-errors';
import { invitationDecider } from '../domain/invitation';
import { invitationStream } from '../domain/member.events';
import { AccountService } from './accounts.service';

export class DeclineInvitationCommand {
  constructor(
    readonly credential: Credential,
    readonly invitationId: string,
  ) {}
}

/**
 * POST /me/invitations/{id}/decline: the invited account says no. The same ownership rule
 * as accepting (the account's registered email), so nobody declines someone else's
 * invitation; declining twice changes nothing.
 */
@CommandHandler(DeclineInvitationCommand)
export class DeclineInvitationHandler implements ICommandHandler<DeclineInvitationCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly accounts: AccountService,
  ) {}

  async execute({ credential, invitationId }: DeclineInvitationCommand): Promise<void> {
    if (credential.kind === 'member_token') {
      throw new ForbiddenError(
        'A member token is bound to one workspace; decline invitations with an account credential',
      );
    }
    const account = await this.accounts.get(credential.accountUuid);
    const { state } = await this.repo.load(invitationStream(invitationId), invitationDecider);
    await this.repo.handle({
      streamName: invitationStream(invitationId),
      workspaceId: state.workspaceId ?? '',
      decider: invitationDecider,
      command: {
        type: 'DeclineInvitation',
        invitationId,
        accountEmail: account.emailVerified ? account.email : null,
        accountUuid: credential.accountUuid,
        now: new Date().toISOString(),
      },
    });
  }
}
