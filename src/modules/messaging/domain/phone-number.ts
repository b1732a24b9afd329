import { ClaimPlan, ClaimRef, defineClaimKind } from '../../../core/claims/claims';
import { Decider, fold } from '../../../core/cqrs/decider';
import { NotFoundError } from '../../../core/http/domain-errors';

/**
 * A workspace's phone number (issue 11, item 1): the number chats send SMS from and
 * inbound texts are routed by. A number belongs to one workspace of the whole service
 * (an inbound text must find exactly one), so its claim's scope is the service.
 */
export interface PhoneNumberCreated {
  type: 'PhoneNumberCreated';
  data: {
    phoneNumberId: number;
    workspaceId: string;
    number: string;
    name: string | null;
    signupRoleId: number | null;
    createdAt: string;
  };
}

export interface PhoneNumberUpdated {
  type: 'PhoneNumberUpdated';
  data: {
    phoneNumberId: number;
    workspaceId: string;
    changes: { number?: string; name?: string | null; signupRoleId?: number | null };
    updatedAt: string;
  };
}

export interface PhoneNumberDeleted {
  type: 'PhoneNumberDeleted';
  data: { phoneNumberId: number; workspaceId: string; number: string; deletedAt: string };
}

export type PhoneNumberEvent = PhoneNumberCreated | PhoneNumberUpdated | PhoneNumberDeleted;

export interface PhoneNumberFields {
  number: string;
  name: string | null;
  signupRoleId: number | null;
}

export interface PhoneNumberState {
  status: 'absent' | 'active' | 'deleted';
  workspaceId: string | null;
  fields: PhoneNumberFields | null;
}

export type PhoneNumberCommand =
  | {
      type: 'CreatePhoneNumber';
      phoneNumberId: number;
      workspaceId: string;
      fields: PhoneNumberFields;
      now: string;
    }
  | {
      type: 'UpdatePhoneNumber';
      phoneNumberId: number;
      workspaceId: string;
      changes: Partial<PhoneNumberFields>;
      now: string;
    }
  | { type: 'DeletePhoneNumber'; phoneNumberId: number; workspaceId: string; now: string };

export const phoneNumberStream = (id: number): string => `phonenumber-${id}`;

/** The claim's scope: the whole service, not a workspace (see above). */
export const SERVICE_SCOPE = 'service';

function live(state: PhoneNumberState, workspaceId: string): PhoneNumberFields {
  if (state.status !== 'active' || state.workspaceId !== workspaceId || !state.fields)
    throw new NotFoundError('Phone number not found');
  return state.fields;
}

export const phoneNumberDecider: Decider<PhoneNumberState, PhoneNumberCommand, PhoneNumberEvent> = {
  initialState: () => ({ status: 'absent', workspaceId: null, fields: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'PhoneNumberCreated': {
        const { number, name, signupRoleId, workspaceId } = event.data;
        return { status: 'active', workspaceId, fields: { number, name, signupRoleId } };
      }
      case 'PhoneNumberUpdated':
        return state.fields ? { ...state, fields: { ...state.fields, ...event.data.changes } } : state;
      case 'PhoneNumberDeleted':
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreatePhoneNumber':
        if (state.status !== 'absent') return [];
        return [
          {
            type: 'PhoneNumberCreated',
            data: {
              phoneNumberId: command.phoneNumberId,
              workspaceId: command.workspaceId,
              ...command.fields,
              createdAt: command.now,
            },
          },
        ];
      case 'UpdatePhoneNumber': {
        const current = live(state, command.workspaceId);
        const changes: PhoneNumberUpdated['data']['changes'] = {};
        for (const key of ['number', 'name', 'signupRoleId'] as const) {
          const next = command.changes[key];
          if (next !== undefined && next !== current[key]) (changes as Record<string, unknown>)[key] = next;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'PhoneNumberUpdated',
            data: {
              phoneNumberId: command.phoneNumberId,
              workspaceId: command.workspaceId,
              changes,
              updatedAt: command.now,
            },
          },
        ];
      }
      case 'DeletePhoneNumber': {
        const current = live(state, command.workspaceId);
        return [
          {
            type: 'PhoneNumberDeleted',
            data: {
              phoneNumberId: command.phoneNumberId,
              workspaceId: command.workspaceId,
              number: current.number,
              deletedAt: command.now,
            },
          },
        ];
      }
    }
  },
};

export const PHONE_NUMBER_CLAIM = defineClaimKind({
  name: 'phone_number',
  holds(events, value) {
    const state = fold(phoneNumberDecider, events as PhoneNumberEvent[]);
    return state.status === 'active' && state.fields?.number === value;
  },
});

const claimOf = (number: string): ClaimRef => ({
  scope: SERVICE_SCOPE,
  kind: PHONE_NUMBER_CLAIM,
  value: number,
});

/** The number a decided change takes and the one it gives up. */
export function phoneNumberClaims(events: readonly PhoneNumberEvent[], before: PhoneNumberState): ClaimPlan {
  const after = events.reduce(phoneNumberDecider.evolve, before);
  const had = before.status === 'active' ? before.fields?.number : undefined;
  const has = after.status === 'active' ? after.fields?.number : undefined;
  if (had === has) return {};
  return { take: has ? [claimOf(has)] : [], release: had ? [claimOf(had)] : [] };
}
