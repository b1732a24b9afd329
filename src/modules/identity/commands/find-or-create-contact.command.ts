import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ConflictError } from '../../../core/http/domain-errors';
import { normalizeEmail, normalizePhone } from '../domain/contact';
import { MemberWriter } from './member-writer.service';
import type { RoleFacts } from '../../roles';
import { RoleLookup } from './role-lookup.service';

/**
 * Someone wrote to the workspace (messaging's inbound SMS and mail): the live member
 * holding that phone or email (its role untouched), or a new member (no account, no
 * consent yet) holding it, with the signup role of the number written to when it has one
 * that still exists, else External. Racing messages from one unknown sender converge on
 * one member through the member claims.
 */
export class FindOrCreateContactMemberCommand {
  constructor(
    readonly workspaceId: string,
    readonly field: 'phone' | 'email',
    /** Phone in international form (stored E.164), or an email address. */
    readonly value: string,
    /** The signup role of the workspace number written to (inbound SMS); null or absent: External. */
    readonly signupRoleId: number | null = null,
  ) {}
}

export interface ContactMember {
  memberId: number;
  created: boolean;
}

const MAX_ATTEMPTS = 5;

@CommandHandler(FindOrCreateContactMemberCommand)
export class FindOrCreateContactMemberHandler implements ICommandHandler<
  FindOrCreateContactMemberCommand,
  ContactMember
> {
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
  ) {}

  async execute(cmd: FindOrCreateContactMemberCommand): Promise<ContactMember> {
    const value =
      cmd.field === 'phone' ? normalizePhone(cmd.value, 'phone') : normalizeEmail(cmd.value, 'email');
    let role: RoleFacts | undefined;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const holder = await this.members.holderOf(cmd.workspaceId, cmd.field, value);
      if (holder !== undefined) return { memberId: holder, created: false };
      role ??= await this.roles.contactRole(cmd.workspaceId, cmd.signupRoleId);
      const outcome = await this.members.create(
        {
          workspaceId: cmd.workspaceId,
          accountUuid: null,
          email: cmd.field === 'email' ? value : null,
          phone: cmd.field === 'phone' ? value : null,
          name: null,
          externalId: null,
          memberRoleId: role.roleId,
          kind: 'person',
          notifySms: false,
          notifyEmail: false,
          notifyVoice: false,
        },
        role,
        'operator',
      );
      if (outcome.kind === 'created') return { memberId: outcome.member.id, created: true };
      if (outcome.kind === 'taken' && outcome.field === cmd.field)
        return { memberId: outcome.holder, created: false };
    }
    throw new ConflictError(`${cmd.field}: kept losing races with concurrent changes to this member; retry`);
  }
}
