import { grants } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';

/** Who asks: effective scopes in the workspace and the caller's own member there. */
export interface CalendarCaller {
  scopes: readonly string[];
  memberId: number | undefined;
  /**
   * The credential's own scopes, before the role intersection, for a scoped credential
   * (API key, OAuth token); undefined for a member token, which acts as the member itself.
   * Self-access needs no role scope, but a scoped credential must still name calendars at
   * that level: an app granted `workspace:read` does not read or write the person's
   * calendars through the owner rule.
   */
  credentialScopes?: readonly string[];
}

/** Whether the owner rule reaches this far for the credential (see credentialScopes). */
const ownerRuleAllows = (caller: CalendarCaller, level: CalendarAccessLevel): boolean =>
  caller.credentialScopes === undefined || grants(caller.credentialScopes, `calendars:${level}`);

export type CalendarAccessLevel = 'read' | 'write' | 'admin';

/**
 * SPEC "Scopes", Calendars: read calendars:read, create and update calendars:write,
 * delete calendars:admin; self-access: owners manage their own calendars. So the member
 * who owns a calendar reads it, creates, changes and deletes its events with no scope at
 * all (a member token included); anyone else needs the scope of the level. A workspace
 * calendar (no owner) and an event on no calendar belong to nobody: scopes only.
 */
export function mayAccessCalendar(
  caller: CalendarCaller,
  ownerMemberId: number | null,
  level: CalendarAccessLevel,
): boolean {
  if (ownerMemberId !== null && caller.memberId === ownerMemberId && ownerRuleAllows(caller, level))
    return true;
  return grants(caller.scopes, `calendars:${level}`);
}

export function assertCalendarAccess(
  caller: CalendarCaller,
  ownerMemberId: number | null,
  level: CalendarAccessLevel,
): void {
  if (!mayAccessCalendar(caller, ownerMemberId, level))
    throw new ForbiddenError(
      `This credential lacks the scope calendars:${level}` +
        (ownerMemberId === null ? '' : " (only the calendar's owner may act without it)"),
    );
}

/**
 * Creating a calendar: for oneself with self-access alone; for another member, or the
 * workspace's own calendar (no owner), calendars:write.
 */
export function assertMayCreateCalendar(caller: CalendarCaller, ownerMemberId: number | null): void {
  if (ownerMemberId !== null && ownerMemberId === caller.memberId && ownerRuleAllows(caller, 'write')) return;
  if (!grants(caller.scopes, 'calendars:write'))
    throw new ForbiddenError(
      'ownerMemberId: creating a calendar for another member or for the workspace requires the scope calendars:write',
    );
}

/**
 * What a list shows the caller: every calendar and event with calendars:read; otherwise
 * (self-access) only its own calendars and their events.
 */
export function calendarVisibility(caller: CalendarCaller): { all: true } | { ownerMemberId: number } {
  if (grants(caller.scopes, 'calendars:read')) return { all: true };
  // A caller without a membership cannot reach a workspace route, and a scoped credential
  // that names no calendars scope reaches no calendar through the owner rule: -1 matches no member.
  if (!ownerRuleAllows(caller, 'read')) return { ownerMemberId: -1 };
  return { ownerMemberId: caller.memberId ?? -1 };
}
