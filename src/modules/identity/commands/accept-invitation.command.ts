import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Credential } from '../../../core/auth/principal';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { WrongExpectedRevisionError } from '../../../core/event-store/event-store.port';
import { ConflictError, ForbiddenError } from '../../../core/http/domain-errors';
import { invitationDecider } from '../domain/invitation';
import { invitationStream, MemberSnapshot } from '../domain/member.events';
import { RoleFacts } from '../../roles';
import { AccountService } from './accounts.service';
import { MemberWriter, takenError } from './member-writer.service';
import { RoleLookup } from './role-lookup.service';

const MAX_ATTEMPTS = 4;

export class AcceptInvitationCommand {
  constructor(
    readonly credential: Credential,
    readonly invitationId: string,
  ) {}
}

/**
 * POST /me/invitations/{id}/accept: the account the invitation was sent to (by email)
 * joins the workspace with the invited role, or, when the workspace already has a
 * contact with that email and no account (imported), becomes that member. This is how
 * one account comes to be a member of many workspaces: by its own act, never by a
 * workspace operator attaching someone else's identity.
 */
@CommandHandler(AcceptInvitationCommand)
export class AcceptInvitationHandler implements ICommandHandler<AcceptInvitationCommand, MemberSnapshot> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly accounts: AccountService,
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
  ) {}

  async execute({ credential, invitationId }: AcceptInvitationCommand): Promise<MemberSnapshot> {
    if (credential.kind === 'member_token') {
      throw new ForbiddenError(
        'A member token is bound to one workspace; accept invitations with an account credential',
      );
    }
    const account = await this.accounts.get(credential.accountUuid);
    const { state, revision } = await this.repo.load(invitationStream(invitationId), invitationDecider);
    const accept = (memberId: number, current = state) =>
      invitationDecider.decide(
        {
          type: 'AcceptInvitation',
          invitationId,
          // Only an email the account was registered with finds invitations (see AccountState).
          accountEmail: account.emailVerified ? account.email : null,
          accountUuid: credential.accountUuid,
          memberId,
          now: new Date().toISOString(),
        },
        current,
      );
    accept(0); // refuses (404/409) before any member is written
    const workspaceId = state.workspaceId!;
    const role = await this.roleFor(workspaceId, state.memberRoleId!);
    const { member, created } = await this.join(
      workspaceId,
      account.email!,
      account.name,
      credential.accountUuid,
      role,
    );
    try {
      await this.repo.append(invitationStream(invitationId), workspaceId, accept(member.id), revision!);
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      // The invitation moved while the member was written (declined, revoked, expired or
      // accepted by a concurrent call): the member this call created must not outlive the
      // refusal, or a declined or revoked invitation would still let its account in.
      if (created) await this.members.archive(workspaceId, member.id);
      const moved = await this.repo.load(invitationStream(invitationId), invitationDecider);
      accept(member.id, moved.state); // throws why it can no longer be accepted
      throw err;
    }
    return member;
  }

  /** The invited role as merges moved it; one gone or unfit for a person falls back to the default. */
  private async roleFor(workspaceId: string, roleId: number): Promise<RoleFacts> {
    const role = await this.roles.effective(roleId);
    const usable =
      role.exists && !role.deleted && role.workspaceId === workspaceId && role.builtIn !== 'agent';
    return usable ? role : this.roles.defaultFor(workspaceId, 'person');
  }

  private async join(
    workspaceId: string,
    email: string,
    name: string | null,
    accountUuid: string,
    role: RoleFacts,
  ): Promise<{ member: MemberSnapshot; created: boolean }> {
    // No escalation check here: the operator who invited was checked for this role; accepting uses that grant.
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const holder = await this.members.holderOf(workspaceId, 'email', email);
      if (holder !== undefined) {
        const existing = await this.members.get(workspaceId, holder);
        if (existing.accountUuid === accountUuid)
          throw new ConflictError('You are already a member of this workspace');
        if (existing.accountUuid) throw takenError('email');
        if (existing.kind !== 'person')
          throw new ConflictError('email: belongs to an agent member of this workspace');
        await this.members.linkAccount(workspaceId, holder, accountUuid);
        const member = await this.members.update(
          workspaceId,
          holder,
          { memberRoleId: role.roleId },
          { assigner: 'operator' },
        );
        return { member, created: false };
      }
      const outcome = await this.members.create(
        {
          workspaceId,
          accountUuid,
          email,
          phone: null,
          name,
          externalId: null,
          memberRoleId: role.roleId,
          kind: 'person',
          notifySms: false,
          notifyEmail: false,
          notifyVoice: false,
        },
        role,
        'operator',
        undefined,
        true,
      );
      if (outcome.kind === 'created') return { member: outcome.member, created: true };
    }
    throw new ConflictError('The invitation kept losing races with concurrent changes; retry');
  }
}
