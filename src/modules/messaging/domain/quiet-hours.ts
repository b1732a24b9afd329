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

const DAY_MS = 86_400_000;

/**
 * The instants a local wall time names in the zone, earliest first: one on most days, two
 * when the clocks go back through it (the repeated hour), and in a DST gap (a wall time the
 * clocks skip) the instant as the offset before the change reads it: the hour after.
 * Offsets are taken a day either side, so one change of offset around the wall time is seen.
 */
function instantsOf(year: number, month: number, day: number, seconds: number, timeZone: string): number[] {
  const wall = Date.UTC(year, month - 1, day) + seconds * 1000;
  const before = wall - offsetAt(wall - DAY_MS, timeZone);
  const after = wall - offsetAt(wall + DAY_MS, timeZone);
  const named = [...new Set([before, after])]
    .filter((t) => {
      const l = localOf(t, timeZone);
      return Date.UTC(l.year, l.month - 1, l.day) + l.seconds * 1000 === wall;
    })
    .sort((a, b) => a - b);
  return named.length ? named : [before];
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
  // The first instant of the end's wall time still ahead: in the night the clocks go back,
  // a time inside the window's repeated hour ends at the second pass of the end.
  const at = instantsOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), end, timeZone).find(
    (t) => t > nowMs,
  );
  return at === undefined ? undefined : new Date(at);
}
