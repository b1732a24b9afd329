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
}

export type AccountCommand =
  | ({ type: 'RegisterAccount'; accountUuid: string; now: string } & AccountProfile)
  | { type: 'UpdateAccount'; accountUuid: string; changes: Partial<AccountProfile>; now: string };

/** An account is a login identity (person or agent); it may be a member of many workspaces. */
export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  initialState: () => ({ exists: false, uuid: null, email: null, phone: null, name: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'AccountRegistered':
        return {
          exists: true,
          uuid: event.data.accountUuid,
          email: event.data.email,
          phone: event.data.phone,
          name: event.data.name,
        };
      case 'AccountUpdated':
        return { ...state, ...event.data.changes };
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
