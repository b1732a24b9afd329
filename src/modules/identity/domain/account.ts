import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import type { AccountEvent, AccountUpdated } from './member.events';

export interface AccountProfile {
  email: string | null;
  phone: string | null;
  name: string | null;
}

export interface AccountState extends AccountProfile {
  exists: boolean;
  uuid: string | null;
  /**
   * Whether the email is the one the account was registered with (by the operator who
   * bootstrapped it or signed it up). An email the account set itself through PUT /me is
   * unproven: this service sends no verification mail yet, so such an address finds no
   * invitations, else anyone could claim another person's invitation by typing their email.
   */
  emailVerified: boolean;
  /** The email the account was registered with. */
  registeredEmail: string | null;
}

export type AccountCommand =
  | ({ type: 'RegisterAccount'; accountUuid: string; now: string } & AccountProfile)
  | { type: 'UpdateAccount'; accountUuid: string; changes: Partial<AccountProfile>; now: string };

/** An account is a login identity (person or agent); it may be a member of many workspaces. */
export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  initialState: () => ({
    exists: false,
    uuid: null,
    email: null,
    phone: null,
    name: null,
    emailVerified: false,
    registeredEmail: null,
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'AccountRegistered':
        return {
          exists: true,
          uuid: event.data.accountUuid,
          email: event.data.email,
          phone: event.data.phone,
          name: event.data.name,
          emailVerified: event.data.email !== null,
          registeredEmail: event.data.email,
        };
      case 'AccountUpdated':
        return {
          ...state,
          ...event.data.changes,
          emailVerified:
            event.data.changes.email !== undefined
              ? state.registeredEmail !== null && event.data.changes.email === state.registeredEmail
              : state.emailVerified,
        };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RegisterAccount':
        if (state.exists) throw new ConflictError('Account already exists');
        return [
          {
            type: 'AccountRegistered',
            data: {
              accountUuid: command.accountUuid,
              email: command.email,
              phone: command.phone,
              name: command.name,
              createdAt: command.now,
            },
          },
        ];
      case 'UpdateAccount': {
        if (!state.exists) throw new NotFoundError('Account not found');
        const changes: AccountUpdated['data']['changes'] = {};
        for (const field of ['email', 'phone', 'name'] as const) {
          const next = command.changes[field];
          if (next !== undefined && next !== state[field]) changes[field] = next;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'AccountUpdated',
            data: { accountUuid: command.accountUuid, changes, updatedAt: command.now },
          },
        ];
      }
    }
  },
};
