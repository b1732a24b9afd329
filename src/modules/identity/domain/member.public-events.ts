import { definePublicEvent } from '../../../core/events/public-events';
import { memberView, type MemberSnapshot, type MemberUpdated } from './member.events';

/** What a member:updated delivery carries besides the envelope: the member as it now stands, as the API shows it. */
export interface MemberUpdatedPayload {
  member: Required<MemberSnapshot>;
}

/**
 * member:updated (SPEC "Events": member information updated), from MemberUpdated, which
 * every change of a member's own fields appends (PUT member, PUT /me, import upsert).
 */
export const MEMBER_UPDATED = definePublicEvent<'member:updated', MemberUpdatedPayload, MemberUpdated>({
  name: 'member:updated',
  description: 'member information updated',
  feature: 'identity',
  sources: ['MemberUpdated'],
  payloadFields: ['member'],
  payload: (event) => ({ member: memberView(event.data.member) }),
});

/** The public events of this feature, for its @Feature descriptor. */
export const IDENTITY_PUBLIC_EVENTS = [MEMBER_UPDATED];
