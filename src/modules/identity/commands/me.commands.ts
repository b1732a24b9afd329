import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Credential } from '../../../core/auth/principal';
import { ACCOUNT_ADMIN, grants } from '../../../core/auth/scopes';
import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import { normalizeEmail, normalizeName, normalizePhone, optional } from '../domain/contact';
import { AccountService } from './accounts.service';
import { MemberChangesInput, normaliseChanges } from './member-input';
import { MemberTokenService } from './member-tokens.service';
import { MemberWriter } from './member-writer.service';

export interface UpdateMeInput {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  notifySms?: boolean;
  notifyEmail?: boolean;
  notifyVoice?: boolean;
}

export class UpdateMeCommand {
  constructor(
    readonly credential: Credential,
    readonly input: UpdateMeInput,
  ) {}
}

export class RevokeOwnMemberTokenCommand {
  constructor(readonly credential: Credential) {}
}

const FLAGS = ['notifySms', 'notifyEmail', 'notifyVoice'] as const;

/**
 * PUT /me. A member token is bound to one member of one workspace, so it edits that
 * member only: it must not reach an account that may belong to other workspaces too.
 * An account credential edits the account; notification flags are per membership.
 */
@CommandHandler(UpdateMeCommand)
export class UpdateMeHandler implements ICommandHandler<UpdateMeCommand, void> {
  constructor(
    private readonly members: MemberWriter,
    private readonly accounts: AccountService,
  ) {}

  async execute({ credential, input }: UpdateMeCommand): Promise<void> {
    if (credential.kind === 'member_token' && credential.workspaceId && credential.memberId !== undefined) {
      const changes = normaliseChanges(input as MemberChangesInput);
      await this.members.update(credential.workspaceId, credential.memberId, changes, {
        assigner: 'operator',
      });
      return;
    }
    // The account reaches every workspace it belongs to, and invitations are matched by its
    // email: editing it is account-level, like managing keys, so a narrow key cannot.
    if (!grants(credential.scopes, ACCOUNT_ADMIN))
      throw new ForbiddenError(`This credential lacks the scope ${ACCOUNT_ADMIN}`);
    const flag = FLAGS.find((f) => input[f] !== undefined);
    if (flag)
      throw new ValidationError(
        `${flag}: notification flags belong to a membership; set them with PUT /w/{wid}/members/{memberId}`,
      );
    const changes = {
      email: optional(input.email, (v) => normalizeEmail(v, 'email')),
      phone: optional(input.phone, (v) => normalizePhone(v, 'phone')),
      name: optional(input.name, (v) => normalizeName(v, 'name')),
    };
    await this.accounts.update(credential.accountUuid, changes);
  }
}

/** DELETE /me/token: a member token revokes itself (sign-out). */
@CommandHandler(RevokeOwnMemberTokenCommand)
export class RevokeOwnMemberTokenHandler implements ICommandHandler<RevokeOwnMemberTokenCommand, void> {
  constructor(private readonly tokens: MemberTokenService) {}

  async execute({ credential }: RevokeOwnMemberTokenCommand): Promise<void> {
    if (credential.kind !== 'member_token' || !credential.workspaceId) {
      throw new ValidationError(
        'Authorization: this endpoint revokes the member token presented, and this credential is not a member token',
      );
    }
    await this.tokens.revoke(credential.workspaceId, credential.credentialId);
  }
}
