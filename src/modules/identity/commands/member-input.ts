import { ValidationError } from '../../../core/http/domain-errors';
import { MAX_ID } from '../../../core/http/validation';
import { isIanaTimeZone, TIMEZONE_RULE } from '../../../core/time/iana-time-zone';
import { normalizeAgentInstructions, normalizeAgentModel } from '../domain/agent-settings';
import {
  normalizeEmail,
  normalizeExternalId,
  normalizeName,
  normalizePhone,
  optional,
} from '../domain/contact';
import type { MemberChanges, MemberSnapshot } from '../domain/member.events';

export type { Caller } from '../domain/member-access.policy';

export interface MemberChangesInput {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  externalId?: string | null;
  memberRoleId?: number;
  notifySms?: boolean;
  notifyEmail?: boolean;
  notifyVoice?: boolean;
  timezone?: string | null;
  agentModel?: string | null;
  agentInstructions?: string | null;
}

/** Normalises an update body; `null` clears a field, absent leaves it. Details name the field (with `prefix`). */
export function normaliseChanges(input: MemberChangesInput, prefix = ''): MemberChanges {
  const out: MemberChanges = {};
  const f = (name: string) => `${prefix}${name}`;
  const email = optional(input.email, (v) => normalizeEmail(v, f('email')));
  const phone = optional(input.phone, (v) => normalizePhone(v, f('phone')));
  const name = optional(input.name, (v) => normalizeName(v, f('name')));
  const externalId = optional(input.externalId, (v) => normalizeExternalId(v, f('externalId')));
  if (email !== undefined) out.email = email;
  if (phone !== undefined) out.phone = phone;
  if (name !== undefined) out.name = name;
  if (externalId !== undefined) out.externalId = externalId;
  if (input.memberRoleId !== undefined) {
    if (!Number.isInteger(input.memberRoleId) || input.memberRoleId < 1 || input.memberRoleId > MAX_ID)
      throw new ValidationError(`${f('memberRoleId')}: must be an integer from 1 to ${MAX_ID}`);
    out.memberRoleId = input.memberRoleId;
  }
  if (input.timezone !== undefined) {
    if (input.timezone !== null && !isIanaTimeZone(input.timezone))
      throw new ValidationError(`${f('timezone')}: ${TIMEZONE_RULE}`);
    out.timezone = input.timezone;
  }
  for (const [field, normalise] of [
    ['agentModel', normalizeAgentModel],
    ['agentInstructions', normalizeAgentInstructions],
  ] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (v !== null && typeof v !== 'string')
      throw new ValidationError(`${f(field)}: must be a string or null`);
    out[field] = v === null ? null : normalise(v, f(field));
  }
  for (const flag of ['notifySms', 'notifyEmail', 'notifyVoice'] as const) {
    const v = input[flag];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw new ValidationError(`${f(flag)}: must be a boolean`);
    out[flag] = v;
  }
  return out;
}

/** SPEC "Scopes", special case 1: a member with no email, phone or name is anonymous. */
export function isAnonymous(m: Pick<MemberSnapshot, 'email' | 'phone' | 'name'>): boolean {
  return !m.email && !m.phone && !m.name;
}
