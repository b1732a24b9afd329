import { secondsOfLocalTime, SmsQuietHours } from '../../workspaces';

/**
 * Quiet hours (issue 11, item 14): assistant SMS written inside the workspace's daily
 * window, in the recipient's local time, goes out at the window's end instead. A reply
 * to the member's own message of the last REPLY_WINDOW_MS is never held back.
 */
export const REPLY_WINDOW_MS = 10 * 60_000;

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, f);
  }
  return f;
}

interface Local {
  year: number;
  month: number;
  day: number;
  /** Seconds since local midnight. */
  seconds: number;
}

function localOf(instantMs: number, timeZone: string): Local {
  const parts: Record<string, number> = {};
  for (const p of format(timeZone).formatToParts(new Date(instantMs)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    seconds: parts.hour * 3600 + parts.minute * 60 + parts.second,
  };
}

/** The zone's offset from UTC at an instant, in ms (local wall time minus UTC). */
function offsetAt(instantMs: number, timeZone: string): number {
  const l = localOf(instantMs, timeZone);
  const wall = Date.UTC(l.year, l.month - 1, l.day) + l.seconds * 1000;
  return wall - Math.floor(instantMs / 1000) * 1000;
}

/** The instant a local wall time names in the zone (in a DST gap, the hour after). */
function instantOf(year: number, month: number, day: number, seconds: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day) + seconds * 1000;
  const guess = wall - offsetAt(wall, timeZone);
  return wall - offsetAt(guess, timeZone);
}

/**
 * When the quiet window holding `nowMs` ends, in the zone; undefined when `nowMs` is
 * outside it. A start after the end spans midnight (21:00-08:00).
 */
export function quietHoursEnd(window: SmsQuietHours, timeZone: string, nowMs: number): Date | undefined {
  const start = secondsOfLocalTime(window.start);
  const end = secondsOfLocalTime(window.end);
  if (start === undefined || end === undefined || start === end) return undefined;
  const now = localOf(nowMs, timeZone);
  const inside =
    start < end ? now.seconds >= start && now.seconds < end : now.seconds >= start || now.seconds < end;
  if (!inside) return undefined;
  // The window ends today, unless it spans midnight and began today: then tomorrow.
  const nextDay = start > end && now.seconds >= start;
  const date = new Date(Date.UTC(now.year, now.month - 1, now.day + (nextDay ? 1 : 0)));
  const at = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), end, timeZone);
  return at > nowMs ? new Date(at) : undefined;
}
