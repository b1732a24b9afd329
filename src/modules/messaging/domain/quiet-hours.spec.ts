import { quietHoursEnd } from './quiet-hours';

const at = (iso: string) => Date.parse(iso);

describe('quietHoursEnd', () => {
  const overnight = { start: '21:00', end: '08:00' };

  it('holds a time inside an overnight window until its end, the next morning or the same one', () => {
    expect(quietHoursEnd(overnight, 'UTC', at('2026-03-02T22:15:00Z'))?.toISOString()).toBe(
      '2026-03-03T08:00:00.000Z',
    );
    expect(quietHoursEnd(overnight, 'UTC', at('2026-03-03T03:00:00Z'))?.toISOString()).toBe(
      '2026-03-03T08:00:00.000Z',
    );
  });

  it('lets a time outside the window through, the end itself included', () => {
    expect(quietHoursEnd(overnight, 'UTC', at('2026-03-03T08:00:00Z'))).toBeUndefined();
    expect(quietHoursEnd(overnight, 'UTC', at('2026-03-03T20:59:59Z'))).toBeUndefined();
    expect(
      quietHoursEnd({ start: '12:00', end: '13:00' }, 'UTC', at('2026-03-03T13:30:00Z')),
    ).toBeUndefined();
  });

  it('reads the window in the given zone, across a change of date', () => {
    // 02:00 UTC is 21:00 the day before in New York (EST, UTC-5): inside, until 08:00 local = 13:00 UTC.
    expect(quietHoursEnd(overnight, 'America/New_York', at('2026-01-15T02:00:00Z'))?.toISOString()).toBe(
      '2026-01-15T13:00:00.000Z',
    );
    // The same instant is 11:00 in Tokyo: outside.
    expect(quietHoursEnd(overnight, 'Asia/Tokyo', at('2026-01-15T02:00:00Z'))).toBeUndefined();
    // 23:00 in Tokyo (14:00 UTC): until 08:00 the next day there, 23:00 UTC.
    expect(quietHoursEnd(overnight, 'Asia/Tokyo', at('2026-01-15T14:00:00Z'))?.toISOString()).toBe(
      '2026-01-15T23:00:00.000Z',
    );
  });

  it('ends at the local time even when the night holds a change of offset', () => {
    // Europe/Paris moves from UTC+1 to UTC+2 in the night of 2026-03-29: 08:00 local is 06:00 UTC.
    expect(quietHoursEnd(overnight, 'Europe/Paris', at('2026-03-28T21:30:00Z'))?.toISOString()).toBe(
      '2026-03-29T06:00:00.000Z',
    );
  });

  it('holds until the hour after an end the clocks skip, never an hour early', () => {
    // New York springs forward at 02:00 on 2026-03-08: 02:30 does not exist; 03:30 EDT is 07:30 UTC.
    const gap = { start: '22:00', end: '02:30' };
    expect(quietHoursEnd(gap, 'America/New_York', at('2026-03-08T04:00:00Z'))?.toISOString()).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    // 01:59 EST, still inside the window: held, not let through.
    expect(quietHoursEnd(gap, 'America/New_York', at('2026-03-08T06:59:00Z'))?.toISOString()).toBe(
      '2026-03-08T07:30:00.000Z',
    );
  });

  it('ends at the second 01:30 for a time in the repeated hour when the clocks go back', () => {
    // New York falls back at 02:00 EDT on 2026-11-01: 01:00-02:00 happens twice.
    const repeated = { start: '22:00', end: '01:30' };
    // 01:10 EDT (first pass): ends at 01:30 EDT.
    expect(quietHoursEnd(repeated, 'America/New_York', at('2026-11-01T05:10:00Z'))?.toISOString()).toBe(
      '2026-11-01T05:30:00.000Z',
    );
    // 01:10 EST (second pass), local time inside the window: ends at 01:30 EST.
    expect(quietHoursEnd(repeated, 'America/New_York', at('2026-11-01T06:10:00Z'))?.toISOString()).toBe(
      '2026-11-01T06:30:00.000Z',
    );
    // 01:45 EST: outside.
    expect(quietHoursEnd(repeated, 'America/New_York', at('2026-11-01T06:45:00Z'))).toBeUndefined();
  });

  it('takes seconds, for windows ending between minutes', () => {
    expect(
      quietHoursEnd({ start: '09:59:50', end: '10:00:05' }, 'UTC', at('2026-03-03T10:00:00Z'))?.toISOString(),
    ).toBe('2026-03-03T10:00:05.000Z');
  });
});
