import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { MAX_ID } from '../../../core/http/validation';
import type { CalendarCaller } from '../domain/calendar-access.policy';

/** Who asks, as the calendar policies need it. */
export const callerOf = (principal: Principal): CalendarCaller => ({
  scopes: principal.effectiveScopes,
  memberId: principal.membership?.memberId,
  credentialScopes: principal.credential.kind === 'member_token' ? undefined : principal.credential.scopes,
});

/** A path id that is not a positive integer names nothing: 404, like an id that does not exist. */
export function pathId(raw: string, notFound: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) throw new NotFoundError(notFound);
  return Number(raw);
}
