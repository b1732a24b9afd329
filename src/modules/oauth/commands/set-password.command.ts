import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ValidationError } from '../../../core/http/domain-errors';
import { accountPasswordDecider, PasswordMismatchError } from '../domain/account-password';
import { NO_WORKSPACE } from '../domain/oauth-app';
import { accountPasswordStream } from '../domain/oauth.events';
import { checkPassword, hashPassword, verifyPassword } from '../domain/password';
import { SignInLimiter } from '../server/sign-in-limiter';

export class SetAccountPasswordCommand {
  constructor(
    readonly accountUuid: string,
    readonly newPassword: string,
    /** Needed once the account has a password (PUT /me/password). */
    readonly currentPassword: string | undefined,
    /** The operator's CLI (bootstrap --password-stdin) sets a password without the current one. */
    readonly byOperator = false,
  ) {}
}

/** Sets or changes an account's password; the hash goes into AccountPasswordSet, the password nowhere. */
@CommandHandler(SetAccountPasswordCommand)
export class SetAccountPasswordHandler implements ICommandHandler<SetAccountPasswordCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly limiter: SignInLimiter,
  ) {}

  async execute(cmd: SetAccountPasswordCommand): Promise<void> {
    const password = checkPassword(cmd.newPassword);
    const loaded = await this.repo.load(accountPasswordStream(cmd.accountUuid), accountPasswordDecider);
    let verified = cmd.byOperator;
    if (!verified && loaded.state.passwordHash) {
      if (cmd.currentPassword === undefined)
        throw new ValidationError('currentPassword: required, since the account has a password');
      // A stolen key must not become a way to guess the password: same limit as sign-in.
      const reservations = await this.limiter.attempt({ accountUuid: cmd.accountUuid });
      verified = await verifyPassword(cmd.currentPassword, loaded.state.passwordHash);
      if (!verified) throw new PasswordMismatchError('currentPassword: does not match the current password');
      reservations.forEach((r) => r.refund());
    }
    const passwordHash = await hashPassword(password);
    await this.repo.handle({
      streamName: accountPasswordStream(cmd.accountUuid),
      workspaceId: NO_WORKSPACE,
      decider: accountPasswordDecider,
      loaded: { state: loaded.state, revision: loaded.revision },
      // A change in between (another PUT) must be decided again: its current password differs.
      maxRetries: 0,
      command: {
        type: 'SetAccountPassword',
        accountUuid: cmd.accountUuid,
        passwordHash,
        currentPasswordVerified: verified,
        now: new Date().toISOString(),
      },
    });
  }
}
