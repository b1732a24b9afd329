import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { v7 as uuidv7 } from 'uuid';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { ConflictError } from '../../../core/http/domain-errors';
import { normalizeEmail } from '../domain/contact';
import { invitationDecider } from '../domain/invitation';
import { invitationStream } from '../domain/member.events';
import { assertNoEscalation, checkRoleAssignment, memberRoleStream } from '../../roles';
import type { Caller } from './member-input';
import { RoleLookup } from './role-lookup.service';

export class CreateInvitationCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: { email: string; memberRoleId?: number },
    readonly caller: Caller,
  ) {}
}

export class RevokeInvitationCommand {
  constructor(
    readonly workspaceId: string,
    readonly invitationId: string,
  ) {}
}

@CommandHandler(CreateInvitationCommand)
export class CreateInvitationHandler implements ICommandHandler<CreateInvitationCommand, string> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly roles: RoleLookup,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: ReferenceGate,
  ) {}

  async execute({ workspaceId, input, caller }: CreateInvitationCommand): Promise<string> {
    const email = normalizeEmail(input.email, 'email');
    // Without a role the invitee gets the workspace's default role.
    const named = input.memberRoleId !== undefined;
    const role = named
      ? await this.roles.facts(input.memberRoleId!)
      : await this.roles.defaultFor(workspaceId, 'person');
    // Role rules first (400/403 for Agent and Platform Support), then no escalation. The
    // default role is checked too: unlike a signup or an import, which make a new account,
    // an invitation can be accepted by an existing account with keys of its own (the
    // caller's second account), so the default would hand that account scopes the caller lacks.
    checkRoleAssignment('person', role, workspaceId, 'operator');
    assertNoEscalation(
      caller.scopes,
      role.permissions,
      'memberRoleId',
      named ? 'the role' : `the workspace's default role, ${role.name},`,
    );
    const invitationId = uuidv7();
    // Through core's ReferenceGate, with the role read again from its stream once inside:
    // a deletion of the role decides from the invitations read model (roles' DeleteMemberRole).
    await this.gate.referring(
      [memberRoleStream(role.roleId)],
      async () => {
        const fresh = await this.roles.facts(role.roleId);
        checkRoleAssignment('person', fresh, workspaceId, 'operator');
        await this.repo.handle({
          streamName: invitationStream(invitationId),
          workspaceId,
          decider: invitationDecider,
          command: {
            type: 'CreateInvitation',
            invitationId,
            workspaceId,
            email,
            role: fresh,
            assigner: 'operator',
            invitedByMemberId: caller.memberId ?? null,
            ttlDays: this.config.invitationTtlDays,
            now: new Date().toISOString(),
          },
        });
      },
      () => new ConflictError(`memberRoleId: role ${role.roleId} is being deleted; retry`),
    );
    return invitationId;
  }
}

@CommandHandler(RevokeInvitationCommand)
export class RevokeInvitationHandler implements ICommandHandler<RevokeInvitationCommand, void> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, invitationId }: RevokeInvitationCommand): Promise<void> {
    await this.repo.handle({
      streamName: invitationStream(invitationId),
      workspaceId,
      decider: invitationDecider,
      command: { type: 'RevokeInvitation', invitationId, workspaceId, now: new Date().toISOString() },
    });
  }
}
