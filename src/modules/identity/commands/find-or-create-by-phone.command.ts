import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ConflictError } from '../../../core/http/domain-errors';
import { normalizePhone } from '../domain/contact';
import { MemberWriter } from './member-writer.service';
import { RoleLookup } from './role-lookup.service';

export class FindOrCreateMemberByPhoneCommand {
  constructor(
    readonly workspaceId: string,
    /** Any form libphonenumber reads in international form; stored E.164. */
    readonly phone: string,
  ) {}
}

export interface MemberByPhone {
  memberId: number;
  created: boolean;
}

const MAX_ATTEMPTS = 5;

/**
 * Someone texted a workspace number (messaging's inbound SMS): the live member holding
 * that phone, or a new External member (no account, no consent yet) that holds it.
 * Racing texts from one unknown number converge on one member through the phone claim.
 */
@CommandHandler(FindOrCreateMemberByPhoneCommand)
export class FindOrCreateMemberByPhoneHandler
  implements ICommandHandler<FindOrCreateMemberByPhoneCommand, MemberByPhone>
{
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
  ) {}

  async execute(cmd: FindOrCreateMemberByPhoneCommand): Promise<MemberByPhone> {
    const phone = normalizePhone(cmd.phone, 'phone');
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const holder = await this.members.holderOf(cmd.workspaceId, 'phone', phone);
      if (holder !== undefined) return { memberId: holder, created: false };
      const role = await this.roles.builtIn(cmd.workspaceId, 'external');
      const outcome = await this.members.create(
        {
          workspaceId: cmd.workspaceId,
          accountUuid: null,
          email: null,
          phone,
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
      if (outcome.kind === 'taken' && outcome.field === 'phone') return { memberId: outcome.holder, created: false };
    }
    throw new ConflictError('phone: kept losing races with concurrent changes to this member; retry');
  }
}
