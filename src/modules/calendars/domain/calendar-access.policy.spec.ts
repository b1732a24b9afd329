import { ForbiddenError } from '../../../core/http/domain-errors';
import {
  assertCalendarAccess,
  assertMayCreateCalendar,
  calendarVisibility,
  mayAccessCalendar,
} from './calendar-access.policy';

const owner = { scopes: [], memberId: 12 };
const reader = { scopes: ['calendars:read'], memberId: 20 };
const writer = { scopes: ['calendars:write'], memberId: 21 };
const admin = { scopes: ['calendars:admin'], memberId: 22 };

describe('calendar access policy', () => {
  it('lets the owner do everything to its own calendar with no scope at all', () => {
    for (const level of ['read', 'write', 'admin'] as const)
      expect(mayAccessCalendar(owner, 12, level)).toBe(true);
  });

  it('asks anyone else for the scope of the level (admin implies write implies read)', () => {
    expect(mayAccessCalendar(reader, 12, 'read')).toBe(true);
    expect(mayAccessCalendar(reader, 12, 'write')).toBe(false);
    expect(mayAccessCalendar(writer, 12, 'write')).toBe(true);
    expect(mayAccessCalendar(writer, 12, 'admin')).toBe(false);
    expect(mayAccessCalendar(admin, 12, 'admin')).toBe(true);
    expect(() => assertCalendarAccess(reader, 12, 'write')).toThrow(
      new ForbiddenError(
        "This credential lacks the scope calendars:write (only the calendar's owner may act without it)",
      ),
    );
  });

  it("treats the workspace's calendar and events on no calendar as nobody's", () => {
    expect(mayAccessCalendar(owner, null, 'read')).toBe(false);
    expect(() => assertCalendarAccess({ scopes: [], memberId: undefined }, null, 'read')).toThrow(
      ForbiddenError,
    );
    expect(mayAccessCalendar(writer, null, 'write')).toBe(true);
  });

  it('lets anyone create its own calendar, and only calendars:write one for others or the workspace', () => {
    expect(() => assertMayCreateCalendar(owner, 12)).not.toThrow();
    expect(() => assertMayCreateCalendar(owner, 13)).toThrow(/^ownerMemberId: .*calendars:write/);
    expect(() => assertMayCreateCalendar(reader, null)).toThrow(ForbiddenError);
    expect(() => assertMayCreateCalendar(writer, 13)).not.toThrow();
    expect(() => assertMayCreateCalendar(writer, null)).not.toThrow();
  });

  it('shows every calendar with calendars:read, else only the caller’s own', () => {
    expect(calendarVisibility(reader)).toEqual({ all: true });
    expect(calendarVisibility(owner)).toEqual({ ownerMemberId: 12 });
  });
});
