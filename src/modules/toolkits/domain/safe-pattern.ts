/**
 * Regular expressions in a tool's input schema (`pattern`, `patternProperties`) are written
 * by a workspace and run by the service on every tool call, on arguments an agent (a
 * language model, or whoever steers it) makes up. JavaScript's backtracking engine takes
 * exponential time on patterns that repeat something that itself repeats (`(a+)+$`,
 * `(\w*)*`) and on backreferences, which would stall the process for every tenant. Such
 * patterns are refused when the schema is written; the length bound keeps the rest cheap.
 */

export const PATTERN_MAX_LENGTH = 512;
/**
 * The longest string a schema pattern is tried on; a longer one does not match. Patterns
 * constrain identifiers, codes, phone numbers, dates; the bound keeps even the polynomial
 * backtracking that passes the check below (`\d*\d*x`) to milliseconds.
 */
export const PATTERN_SUBJECT_MAX = 1000;

/**
 * The longest string a pattern with MAX_LONG_REPEATS long repetitions is tried on: with
 * three, a near miss costs its cube, about 5 ms at this length (half a second at 1,000).
 * Long enough for any email address (254 at most), which the common email patterns need.
 */
export const PATTERN_SUBJECT_MAX_THREE_REPEATS = 256;

/** The longest string `pattern` is tried on: shorter when it has three long repetitions. */
export function patternSubjectMax(pattern: string): number {
  return scan(pattern).longRepeats >= MAX_LONG_REPEATS
    ? PATTERN_SUBJECT_MAX_THREE_REPEATS
    : PATTERN_SUBJECT_MAX;
}

/** Ajv's regular-expression engine for tool schemas: JavaScript's, on bounded input. */
export const boundedRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const rx = new RegExp(pattern, flags);
    const max = patternSubjectMax(pattern);
    return { test: (s: string) => s.length <= max && rx.test(s) };
  },
  { code: 'boundedRegExp' },
);

/** Why `source` is refused as a schema pattern, or undefined when it is acceptable. */
export function unsafePatternReason(source: string): string | undefined {
  if (source.length > PATTERN_MAX_LENGTH) return `must be at most ${PATTERN_MAX_LENGTH} characters`;
  try {
    // Ajv compiles patterns with the `u` flag.
    new RegExp(source, 'u');
  } catch {
    return 'must be a valid regular expression';
  }
  return scan(source).reason;
}

interface Group {
  /** Whether something inside repeats (a quantifier other than `?`, or a repeating group). */
  repeats: boolean;
  /**
   * Whether it holds, at any depth, alternatives that can begin with the same character
   * (`a|ab`, `\w|\d`): repeated, such a group matches one string in exponentially many
   * ways, and a backtracking engine tries them all on a near miss (`^(\w|\d)+$` takes
   * half a minute on 29 characters).
   */
  ambiguous: boolean;
  /** Where its contents begin, and the positions of its own top-level `|`. */
  start: number;
  bars: number[];
}

const REPEATED_GROUP =
  'must not repeat a group that itself repeats (such as (a+)+): it can take exponential time';
const REPEATED_CHOICE =
  'must not repeat a group whose alternatives can begin alike (such as (a|ab)+ or (\\w|\\d)*): it can take exponential time';

/**
 * The character a branch certainly begins with: a literal or an escaped punctuation mark
 * not made optional by a quantifier. Undefined when that is not certain (a class, an
 * escape such as `\d`, a group, `.`, an anchor, an empty branch), which counts as
 * possibly beginning like any other.
 */
function headOf(branch: string): string | undefined {
  let head: string;
  let length: number;
  const c = branch[0];
  if (c === undefined || '([.^$|)'.includes(c)) return undefined;
  if (c === '\\') {
    const next = branch[1];
    if (next === undefined || /[A-Za-z0-9]/.test(next)) return undefined;
    head = next;
    length = 2;
  } else {
    head = String.fromCodePoint(branch.codePointAt(0)!);
    length = head.length;
  }
  const after = branch[length];
  return after !== undefined && '?*{'.includes(after) ? undefined : head;
}

/** Whether the group's alternatives (split at its top-level bars) can begin alike. */
function alternativesOverlap(s: string, group: Group, end: number): boolean {
  if (!group.bars.length) return false;
  const cuts = [group.start, ...group.bars.map((b) => b + 1)];
  const ends = [...group.bars, end];
  const heads = cuts.map((from, k) => headOf(s.slice(from, ends[k])));
  return heads.some((h) => h === undefined) || new Set(heads).size !== heads.length;
}

/** Length of the quantifier at `i` and whether it repeats (`*`, `+`, `{n,}`, `{n,m}` with m > 1). */
function quantifierAt(s: string, i: number): { length: number; repeats: boolean; long: boolean } | undefined {
  const c = s[i];
  if (c === '*' || c === '+') return { length: lazy(s, i + 1) + 1, repeats: true, long: true };
  if (c === '?') return { length: lazy(s, i + 1) + 1, repeats: false, long: false };
  if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(i));
    if (!m) return undefined;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
    return { length: m[0].length + lazy(s, i + m[0].length), repeats: max > 1, long: max >= LONG_REPEAT };
  }
  return undefined;
}

/**
 * A repetition of at least this many (or unbounded) counts as long. Adjacent long
 * repetitions that can match the same text (`\d*\d*\d*x`) make a near miss take time
 * polynomial in the subject, of degree their number: on 1,000 characters two take about a
 * millisecond, three half a second (23 s for the 32 such strings an agent's 32,000
 * characters of arguments can hold), four minutes. A pattern may have at most
 * MAX_LONG_REPEATS of them, and one with that many is tried only on strings of at most
 * PATTERN_SUBJECT_MAX_THREE_REPEATS characters (about 5 ms each), so that the common email
 * patterns (`^\S+@\S+\.\S+$`) stay usable.
 */
const LONG_REPEAT = 32;
export const MAX_LONG_REPEATS = 3;
const TOO_MANY_REPEATS = `must not have more than ${MAX_LONG_REPEATS} unbounded repetitions (*, +, {n,} or {n,m} with m of ${LONG_REPEAT} or more): each one more multiplies the time a near miss takes (for email addresses use format: "email")`;

const lazy = (s: string, i: number): number => (s[i] === '?' ? 1 : 0);

function scan(s: string): { reason?: string; longRepeats: number } {
  let longRepeats = 0;
  const refused = (reason: string) => ({ reason, longRepeats });
  const tooMany = (q: { long: boolean }): boolean => q.long && ++longRepeats > MAX_LONG_REPEATS;
  const stack: Group[] = [{ repeats: false, ambiguous: false, start: 0, bars: [] }];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') {
      const next = s[i + 1];
      if (/[1-9]/.test(next) || next === 'k') return refused('must not use backreferences');
      i += 2;
      // An escaped atom may be quantified like any other.
      const q = quantifierAt(s, i);
      if (q) {
        if (tooMany(q)) return refused(TOO_MANY_REPEATS);
        if (q.repeats) stack[stack.length - 1].repeats = true;
        i += q.length;
      }
      continue;
    }
    if (c === '[') {
      // A character class is one atom: skip to its closing bracket (escapes included).
      i++;
      if (s[i] === '^') i++;
      if (s[i] === ']') i++;
      while (i < s.length && s[i] !== ']') i += s[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '(') {
      const group: Group = { repeats: false, ambiguous: false, start: i + 1, bars: [] };
      stack.push(group);
      i++;
      // Group modifiers: (?:...), (?=...), (?!...), (?<name>...), (?<=...), (?<!...)
      if (s[i] === '?') {
        i++;
        if (s[i] === '<' && s[i + 1] !== '=' && s[i + 1] !== '!') {
          while (i < s.length && s[i] !== '>') i++;
        }
        i++;
      }
      group.start = i;
      continue;
    } else if (c === '|') {
      stack[stack.length - 1].bars.push(i);
      i++;
      continue;
    } else if (c === ')') {
      const group = stack.pop() ?? { repeats: false, ambiguous: false, start: i, bars: [] };
      if (alternativesOverlap(s, group, i)) group.ambiguous = true;
      i++;
      const q = quantifierAt(s, i);
      if (q) {
        if (q.repeats && group.repeats) return refused(REPEATED_GROUP);
        if (q.repeats && group.ambiguous) return refused(REPEATED_CHOICE);
        if (tooMany(q)) return refused(TOO_MANY_REPEATS);
        i += q.length;
        if (q.repeats) group.repeats = true;
      }
      const parent = stack[stack.length - 1];
      if (group.repeats) parent.repeats = true;
      if (group.ambiguous) parent.ambiguous = true;
      continue;
    } else {
      i++;
    }
    const q = quantifierAt(s, i);
    if (q) {
      if (tooMany(q)) return refused(TOO_MANY_REPEATS);
      if (q.repeats) stack[stack.length - 1].repeats = true;
      i += q.length;
    }
  }
  return { longRepeats };
}
