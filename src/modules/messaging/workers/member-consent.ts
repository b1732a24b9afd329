import type { StoredEvent } from '../../../core/event-store/event-store.port';
import type { MemberEvent } from '../../identity';
import type { Channel } from '../domain/chat.events';

/** A recipient as its member stream says it at the moment of sending. */
export interface Recipient {
  /** The member's consent to this channel: opted out (SMS keywords), no consent, or given. */
  consent: 'consented' | 'opted_out' | 'no_consent';
  phone: string | null;
  email: string | null;
  active: boolean;
}

/** The member flag that records consent to each channel a provider carries (web chat needs none: the member opened it). */
const CONSENT_FLAG = {
  'phone-sms': 'notifySms',
  email: 'notifyEmail',
  'phone-voice': 'notifyVoice',
} as const satisfies Partial<Record<Channel, 'notifySms' | 'notifyEmail' | 'notifyVoice'>>;

export type ConsentChannel = keyof typeof CONSENT_FLAG;

/**
 * The member's consent to `channel` and its addresses, folded from its own stream (identity's
 * `memberStream`), read at the moment of sending: a PUT turning a flag off, or a STOP, appended
 * before the send is honoured even while the read models lag. SMS: the last opt-out or opt-in
 * keyword holds whatever notifySms says since (STOP until START), then notifySms. Email and
 * voice: notifyEmail and notifyVoice, as the member records consent to those channels (SPEC:
 * the member's notify flags). A member of another workspace has neither consent nor address.
 */
export function recipientOf(
  workspaceId: string,
  stream: readonly StoredEvent[],
  channel: ConsentChannel,
): Recipient {
  const events = stream as unknown as MemberEvent[];
  let optedOut = false;
  let inWorkspace = false;
  let flags = { notifySms: false, notifyEmail: false, notifyVoice: false };
  let phone: string | null = null;
  let email: string | null = null;
  let active = false;
  for (const e of events) {
    switch (e.type) {
      case 'MemberCreated':
        inWorkspace = e.data.workspaceId === workspaceId;
        flags = e.data;
        ({ phone, email } = e.data);
        active = true;
        break;
      case 'MemberUpdated':
      case 'MemberArchived':
        flags = e.data.member;
        ({ phone, email } = e.data.member);
        active = e.data.member.status === 'active';
        break;
      case 'MemberOptedOutOfSms':
        optedOut = true;
        break;
      case 'MemberOptedInToSms':
        optedOut = false;
        break;
    }
  }
  if (!inWorkspace) return { consent: 'no_consent', phone: null, email: null, active: false };
  const consent =
    channel === 'phone-sms' && optedOut
      ? 'opted_out'
      : flags[CONSENT_FLAG[channel]]
        ? 'consented'
        : 'no_consent';
  return { consent, phone, email, active };
}
