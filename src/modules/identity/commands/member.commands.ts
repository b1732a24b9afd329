import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import type { MemberSnapshot } from '../domain/member.events';
import { assertNoEscalation } from '../../roles/domain/escalation.policy';
import { Caller, isAnonymous, MemberChangesInput, normaliseChanges } from './member-input';
import { LoadedMember, MemberWriter } from './member-writer.service';

/** Fields only holders of members:write may change, even on their own record. */
const OPERATOR_FIELDS = ['memberRoleId', 'externalId'] as const;

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
 * Self-access (SPEC "Scopes", Members: own profile): a member may change its own
 * contact details and notification flags without members:write; an anonymous member
 * is invisible (404) to anyone without members:admin but itself.
 */
async function authorise(
  members: MemberWriter,
  cmd: { workspaceId: string; memberId: number; caller: Caller },
): Promise<{ current: MemberSnapshot; canWrite: boolean; loaded: LoadedMember }> {
  const canWrite = grants(cmd.caller.scopes, 'members:write');
  const self = cmd.caller.memberId === cmd.memberId;
  // Existence first: a member of another workspace is 404 whatever the caller's scopes.
  const loaded = await members.loaded(cmd.workspaceId, cmd.memberId);
  const current = loaded.state.member!;
  if (!self && isAnonymous(current) && !grants(cmd.caller.scopes, 'members:admin'))
    throw new NotFoundError('Member not found');
  if (!canWrite && !self) throw new ForbiddenError('This credential lacks the scope members:write');
  return { current, canWrite, loaded };
}

@CommandHandler(UpdateMemberCommand)
export class UpdateMemberHandler implements ICommandHandler<UpdateMemberCommand, MemberSnapshot> {
  constructor(private readonly members: MemberWriter) {}

  async execute(cmd: UpdateMemberCommand): Promise<MemberSnapshot> {
    const { current, canWrite, loaded } = await authorise(this.members, cmd);
    const changes = normaliseChanges(cmd.input);
    if (!canWrite) {
      for (const field of OPERATOR_FIELDS) {
        if (changes[field] !== undefined && changes[field] !== current[field]) {
          throw new ForbiddenError(`${field}: changing it requires the scope members:write`);
        }
      }
    }
    return this.members.update(cmd.workspaceId, cmd.memberId, changes, {
      assigner: 'operator',
      checkRole: (role) => assertNoEscalation(cmd.caller.scopes, role.permissions, 'memberRoleId'),
      expectedRevision: cmd.expectedRevision,
      loaded,
    });
  }
}

@CommandHandler(ArchiveMemberCommand)
export class ArchiveMemberHandler implements ICommandHandler<ArchiveMemberCommand, MemberSnapshot> {
  constructor(private readonly members: MemberWriter) {}

  execute(cmd: ArchiveMemberCommand): Promise<MemberSnapshot> {
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
