import { ClaimRef, defineClaimKind } from '../../../core/claims/claims';
import type { Channel, ChatCreated } from './chat.events';

/**
 * The chat an inbound text or mail opens for a member who has none on that channel (and
 * number): one per (member, channel, number) in the workspace, claimed with the chat's
 * ChatCreated, so two texts arriving at once from a new member land in one chat. The
 * claim's owner is that chat's stream.
 */
export const INBOUND_CHAT_CLAIM = defineClaimKind({
  name: 'inbound_chat',
  holds(events, value) {
    const created = events.find((e) => e.type === 'ChatCreated') as ChatCreated | undefined;
    return (
      !!created &&
      inboundChatKey(created.data.channel, created.data.memberId, created.data.phoneNumberId) === value
    );
  },
});

export function inboundChatKey(channel: Channel, memberId: number, phoneNumberId: number | null): string {
  return `${channel}:${memberId}:${phoneNumberId ?? ''}`;
}

export function inboundChatClaim(
  workspaceId: string,
  channel: Channel,
  memberId: number,
  phoneNumberId: number | null,
): ClaimRef {
  return {
    scope: workspaceId,
    kind: INBOUND_CHAT_CLAIM,
    value: inboundChatKey(channel, memberId, phoneNumberId),
  };
}
