import { ClaimPlan, defineClaimKind } from '../../../core/claims/claims';
import { Decider, fold } from '../../../core/cqrs/decider';

/**
 * A workspace's email inbox (issue 11, item 1): the address email chats send from and
 * inbound mail is routed by, so unique in the whole service. Its owner and the members
 * it is granted to may use it without inboxes:read (SPEC, Scopes: "ownership or an
 * explicit inbox grant gives access to one inbox").
 */
export interface InboxCreated {
  type: 'InboxCreated';
  data: {
    inboxId: number;
    workspaceId: string;
    email: string;
    name: string | null;
    ownerMemberId: number | null;
    grantedMemberIds: number[];
    createdAt: string;
  };
}

export type InboxEvent = InboxCreated;

export interface InboxState {
  exists: boolean;
  email: string | null;
}

export type InboxCommand = {
  type: 'CreateInbox';
  inbox: Omit<InboxCreated['data'], 'createdAt'>;
  now: string;
};

export const inboxStream = (id: number): string => `inbox-${id}`;

export const inboxDecider: Decider<InboxState, InboxCommand, InboxEvent> = {
  initialState: () => ({ exists: false, email: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'InboxCreated':
        return { exists: true, email: event.data.email };
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateInbox':
        if (state.exists) return [];
        return [{ type: 'InboxCreated', data: { ...command.inbox, createdAt: command.now } }];
    }
  },
};

export const INBOX_EMAIL_CLAIM = defineClaimKind({
  name: 'inbox_email',
  holds(events, value) {
    return fold(inboxDecider, events as InboxEvent[]).email === value;
  },
});

export function inboxClaims(events: readonly InboxEvent[]): ClaimPlan {
  return {
    take: events.map((e) => ({ scope: 'service', kind: INBOX_EMAIL_CLAIM, value: e.data.email })),
  };
}
