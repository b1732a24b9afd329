import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { assertNoEscalation } from '../../roles';
import { assertSelfChangeAllowed, authoriseMemberChange } from '../domain/member-access.policy';
import type { MemberSnapshot } from '../domain/member.events';
import { Caller, isAnonymous, MemberChangesInput, normaliseChanges } from './member-input';
import type { CachedLoader } from '../../../core/cqrs/event-sourced-repository';
import { LoadedMember, MemberWriter, UpdateOutcome } from './member-writer.service';
import { RoleLookup } from './role-lookup.service';

export class UpdateMemberCommand {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly input: MemberChangesInput,
    readonly caller: Caller,
    /** If-Match: the member stream revision the write must find. */
    readonly expectedRevision?: bigint,
  ) {}
}

export class ArchiveMemberCommand {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly caller: Caller,
    readonly expectedRevision?: bigint,
  ) {}
}

export class RevokeMemberTokensCommand {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly caller: Caller,
  ) {}
}

/**
 * Loads the member (existence first: a member of another workspace is 404 whatever the
 * caller's scopes), then applies the self-access policy (domain/member-access.policy.ts).
 */
async function authorise(
  members: MemberWriter,
  cmd: { workspaceId: string; memberId: number; caller: Caller },
  loader?: CachedLoader,
): Promise<{ current: MemberSnapshot; canWrite: boolean; loaded: LoadedMember }> {
  const loaded = await members.loaded(cmd.workspaceId, cmd.memberId, loader);
  const current = loaded.state.member!;
  const { canWrite } = authoriseMemberChange(cmd.caller, cmd.memberId, { anonymous: isAnonymous(current) });
  return { current, canWrite, loaded };
}

@CommandHandler(UpdateMemberCommand)
export class UpdateMemberHandler implements ICommandHandler<UpdateMemberCommand, UpdateOutcome> {
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
  ) {}

  /**
   * First on the member as this process last knew it (no stream read); the whole command,
   * checks included, again on the member read from the store should that prove stale.
   */
  execute(cmd: UpdateMemberCommand): Promise<UpdateOutcome> {
    return this.members.cachedFirst((loader) => this.run(cmd, loader));
  }

  private async run(cmd: UpdateMemberCommand, loader: CachedLoader): Promise<UpdateOutcome> {
    const { current, canWrite, loaded } = await authorise(this.members, cmd, loader);
    const changes = normaliseChanges(cmd.input);
    assertSelfChangeAllowed(canWrite, changes, current);
    if (changes.memberRoleId !== undefined && changes.memberRoleId !== current.memberRoleId) {
      // What the member would get first, then what it would lose (the writer checks the first again).
      const next = await this.roles.facts(changes.memberRoleId);
      if (next.exists) assertNoEscalation(cmd.caller.scopes, next.permissions, 'memberRoleId');
      await this.roles.assertMayMoveOff(cmd.caller.scopes, current.memberRoleId, 'memberRoleId');
    }
    await this.roles.assertMaySteerAgent(cmd.caller.scopes, current, changes);
    return this.members.updateOutcome(cmd.workspaceId, cmd.memberId, changes, {
      assigner: 'operator',
      checkRole: (role) => assertNoEscalation(cmd.caller.scopes, role.permissions, 'memberRoleId'),
      expectedRevision: cmd.expectedRevision,
      loaded,
    });
  }
}

@CommandHandler(ArchiveMemberCommand)
export class ArchiveMemberHandler implements ICommandHandler<ArchiveMemberCommand, MemberSnapshot> {
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
  ) {}

  async execute(cmd: ArchiveMemberCommand): Promise<MemberSnapshot> {
    const { current } = await authorise(this.members, cmd);
    await this.roles.assertMayMoveOff(cmd.caller.scopes, current.memberRoleId, 'memberId');
    return this.members.archive(cmd.workspaceId, cmd.memberId, cmd.expectedRevision);
  }
}

/** Every member token of the member issued so far stops working at once. */
@CommandHandler(RevokeMemberTokensCommand)
export class RevokeMemberTokensHandler implements ICommandHandler<RevokeMemberTokensCommand, void> {
  constructor(private readonly members: MemberWriter) {}

  async execute(cmd: RevokeMemberTokensCommand): Promise<void> {
    await authorise(this.members, cmd);
    await this.members.revokeTokens(cmd.workspaceId, cmd.memberId);
  }
}
