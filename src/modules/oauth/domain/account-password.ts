import { ForbiddenError } from '../../../core/http/domain-errors';
import { Decider } from '../../../core/cqrs/decider';
import type { AccountPasswordEvent } from './oauth.events';

export type AccountPasswordCommand = {
  type: 'SetAccountPassword';
  accountUuid: string;
  /** Hashed before deciding (hashing is slow and random, so not the decider's work). */
  passwordHash: string;
  /** Whether the caller proved the current password (or is the operator's CLI). */
  currentPasswordVerified: boolean;
  now: string;
};

export interface AccountPasswordState {
  hasPassword: boolean;
  passwordHash: string | null;
}

export const accountPasswordDecider: Decider<
  AccountPasswordState,
  AccountPasswordCommand,
  AccountPasswordEvent
> = {
  initialState: () => ({ hasPassword: false, passwordHash: null }),
  evolve(_state, event) {
    switch (event.type) {
      case 'AccountPasswordSet':
        return { hasPassword: true, passwordHash: event.data.passwordHash };
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'SetAccountPassword':
        if (state.hasPassword && !command.currentPasswordVerified)
          throw new PasswordMismatchError('currentPassword: does not match the current password');
        return [
          {
            type: 'AccountPasswordSet',
            data: {
              accountUuid: command.accountUuid,
              passwordHash: command.passwordHash,
              setAt: command.now,
            },
          },
        ];
    }
  },
};

/** A wrong or missing current password: 403, and it counts as a failed sign-in attempt. */
export class PasswordMismatchError extends ForbiddenError {}
