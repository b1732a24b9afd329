import type { AccountRegistered, MemberCreated, MemberKind } from './identity.events';

export type MemberStatus = 'active' | 'archived';

/** The whole member as it stands after an event: what webhooks (member:updated) carry. */
export interface MemberSnapshot {
  id: number;
  workspaceId: string;
  accountUuid: string | null;
  email: string | null;
  phone: string | null;
  name: string | null;
  externalId: string | null;
  memberRoleId: number;
  kind: MemberKind;
  status: MemberStatus;
  notifySms: boolean;
  notifyEmail: boolean;
  notifyVoice: boolean;
  /** IANA time zone (messaging's SMS quiet hours read it); absent on members from before it existed. */
  timezone?: string | null;
  /**
   * An agent member's assistant settings: the model its chats' replies use (null:
   * ASSISTANT_MODEL) and the instructions put into their system prompt. Absent on persons
   * and on members from before they existed (read as null).
   */
  agentModel?: string | null;
  agentInstructions?: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The member as it leaves the service, in API responses and member:updated deliveries
 * alike: every field named here and nothing else, the fields older snapshots lack as null,
 * so a receiver sees one shape whatever the member's history.
 */
export function memberView(m: MemberSnapshot): Required<MemberSnapshot> {
  return {
    id: m.id,
    workspaceId: m.workspaceId,
    accountUuid: m.accountUuid,
    email: m.email,
    phone: m.phone,
    name: m.name,
    externalId: m.externalId,
    memberRoleId: m.memberRoleId,
    kind: m.kind,
    status: m.status,
    notifySms: m.notifySms,
    notifyEmail: m.notifyEmail,
    notifyVoice: m.notifyVoice,
    timezone: m.timezone ?? null,
    agentModel: m.agentModel ?? null,
    agentInstructions: m.agentInstructions ?? null,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

/** Fields a member update may change (PUT /w/{wid}/members/{id}, PUT /me, import upsert). */
export interface MemberChanges {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  externalId?: string | null;
  memberRoleId?: number;
  notifySms?: boolean;
  notifyEmail?: boolean;
  notifyVoice?: boolean;
  timezone?: string | null;
  /** Agent members only (a person's is a 400). */
  agentModel?: string | null;
  agentInstructions?: string | null;
}

export interface MemberUpdated {
  type: 'MemberUpdated';
  data: {
    memberId: number;
    workspaceId: string;
    /** Only the fields that changed, with their new values. */
    changes: MemberChanges;
    member: MemberSnapshot;
    updatedAt: string;
  };
}

export interface MemberArchived {
  type: 'MemberArchived';
  data: { memberId: number; workspaceId: string; member: MemberSnapshot; archivedAt: string };
}

/** A contact created without an account (import) gets one when it signs up or accepts an invitation. */
export interface MemberAccountLinked {
  type: 'MemberAccountLinked';
  data: { memberId: number; workspaceId: string; accountUuid: string; linkedAt: string };
}

/** Every member token of the member issued at or before `revokedBefore` stops working. */
export interface MemberTokensRevoked {
  type: 'MemberTokensRevoked';
  data: { memberId: number; workspaceId: string; revokedBefore: string };
}

/**
 * No longer written (core claims fence with ClaimFenced since member values moved onto
 * them); kept so that member streams holding one still fold and project.
 *
 * Written by a request that takes over a uniqueness claim whose holder looks dead
 * (never created, or its pending change never landed). Appending it at the revision
 * the taker saw makes any still-pending write of the holder fail its expected-revision
 * check, so the holder can never land a value the taker now owns.
 */
export interface MemberWriteFenced {
  type: 'MemberWriteFenced';
  data: { memberId: number; workspaceId: string; reason: 'orphan_claim' | 'stale_claim'; fencedAt: string };
}

/**
 * The member texted an opt-out keyword (STOP...): no SMS may reach them until they opt
 * back in, whatever notifySms says later. Appended with the MemberUpdated that turns
 * notifySms off (when it was on), so member:updated fires as for any other change.
 */
export interface MemberOptedOutOfSms {
  type: 'MemberOptedOutOfSms';
  data: { memberId: number; workspaceId: string; keyword: string; optedOutAt: string };
}

/** The member texted START, YES or UNSTOP: SMS consent is back (notifySms true). */
export interface MemberOptedInToSms {
  type: 'MemberOptedInToSms';
  data: { memberId: number; workspaceId: string; keyword: string; optedInAt: string };
}

export type MemberEvent =
  | MemberOptedOutOfSms
  | MemberOptedInToSms
  | MemberCreated
  | MemberUpdated
  | MemberArchived
  | MemberAccountLinked
  | MemberTokensRevoked
  | MemberWriteFenced;

export interface AccountUpdated {
  type: 'AccountUpdated';
  data: {
    accountUuid: string;
    changes: { email?: string | null; phone?: string | null; name?: string | null };
    updatedAt: string;
  };
}

export type AccountEvent = AccountRegistered | AccountUpdated;

export interface MemberTokenIssued {
  type: 'MemberTokenIssued';
  data: {
    tokenId: string;
    workspaceId: string;
    memberId: number;
    accountUuid: string;
    /** Public part of the token (`wsm_<prefix>_...`), used to find it. */
    prefix: string;
    /** SHA-256 of the whole token, hex; the token itself is never stored. */
    secretHash: string;
    issuedAt: string;
    expiresAt: string;
  };
}

export interface MemberTokenRevoked {
  type: 'MemberTokenRevoked';
  data: { tokenId: string; workspaceId: string; memberId: number; revokedAt: string };
}

/**
 * Appended by the expiry worker once the token's expiresAt has passed. The token is
 * refused from that instant anyway (by its expiresAt); the event records the lapse for
 * auditors and read models.
 */
export interface MemberTokenExpired {
  type: 'MemberTokenExpired';
  data: { tokenId: string; workspaceId: string; memberId: number; expiredAt: string };
}

export type MemberTokenEvent = MemberTokenIssued | MemberTokenRevoked | MemberTokenExpired;

export type UniqueMemberField = 'email' | 'phone' | 'externalId';

/**
 * Uniqueness claims (DESIGN.md, "Uniqueness"): one stream per (workspace, field,
 * value), appended first with 'no_stream' so exactly one request wins. The value is
 * only in the stream name, hashed; the events never carry it.
 */
export interface MemberValueClaimed {
  type: 'MemberValueClaimed';
  data: { workspaceId: string; field: UniqueMemberField; memberId: number; claimedAt: string };
}

export interface MemberValueReleased {
  type: 'MemberValueReleased';
  data: { workspaceId: string; field: UniqueMemberField; memberId: number; releasedAt: string };
}

export type ClaimEvent = MemberValueClaimed | MemberValueReleased;

export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'revoked' | 'expired';

export interface InvitationCreated {
  type: 'InvitationCreated';
  data: {
    invitationId: string;
    workspaceId: string;
    email: string;
    memberRoleId: number;
    invitedByMemberId: number | null;
    createdAt: string;
    expiresAt: string;
  };
}

export interface InvitationRevoked {
  type: 'InvitationRevoked';
  data: { invitationId: string; workspaceId: string; revokedAt: string };
}

export interface InvitationAccepted {
  type: 'InvitationAccepted';
  data: {
    invitationId: string;
    workspaceId: string;
    memberId: number;
    accountUuid: string;
    acceptedAt: string;
  };
}

/** The invited account said no: the invitation can no longer be accepted. */
export interface InvitationDeclined {
  type: 'InvitationDeclined';
  data: { invitationId: string; workspaceId: string; accountUuid: string; declinedAt: string };
}

/** Appended by the expiry worker once a pending invitation's expiresAt has passed. */
export interface InvitationExpired {
  type: 'InvitationExpired';
  data: { invitationId: string; workspaceId: string; expiredAt: string };
}

export type InvitationEvent =
  InvitationCreated | InvitationRevoked | InvitationAccepted | InvitationDeclined | InvitationExpired;

export const memberTokenStream = (id: string): string => `membertoken-${id}`;
export const invitationStream = (id: string): string => `invitation-${id}`;
