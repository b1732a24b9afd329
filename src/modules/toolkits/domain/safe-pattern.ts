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

/** Ajv's regular-expression engine for tool schemas: JavaScript's, on bounded input. */
export const boundedRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const rx = new RegExp(pattern, flags);
    return { test: (s: string) => s.length <= PATTERN_SUBJECT_MAX && rx.test(s) };
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
  return scan(source);
}

interface Group {
  /** Whether something inside repeats (a quantifier other than `?`, or a repeating group). */
  repeats: boolean;
}

/** Length of the quantifier at `i` and whether it repeats (`*`, `+`, `{n,}`, `{n,m}` with m > 1). */
function quantifierAt(s: string, i: number): { length: number; repeats: boolean } | undefined {
  const c = s[i];
  if (c === '*' || c === '+') return { length: lazy(s, i + 1) + 1, repeats: true };
  if (c === '?') return { length: lazy(s, i + 1) + 1, repeats: false };
  if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(i));
    if (!m) return undefined;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
    return { length: m[0].length + lazy(s, i + m[0].length), repeats: max > 1 };
  }
  return undefined;
}

const lazy = (s: string, i: number): number => (s[i] === '?' ? 1 : 0);

function scan(s: string): string | undefined {
  const stack: Group[] = [{ repeats: false }];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') {
      const next = s[i + 1];
      if (/[1-9]/.test(next) || next === 'k') return 'must not use backreferences';
      i += 2;
      // An escaped atom may be quantified like any other.
      const q = quantifierAt(s, i);
      if (q) {
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
      stack.push({ repeats: false });
      i++;
      // Group modifiers: (?:...), (?=...), (?!...), (?<name>...), (?<=...), (?<!...)
      if (s[i] === '?') {
        i++;
        if (s[i] === '<' && s[i + 1] !== '=' && s[i + 1] !== '!') {
          while (i < s.length && s[i] !== '>') i++;
        }
        i++;
      }
      continue;
    } else if (c === ')') {
      const group = stack.pop() ?? { repeats: false };
      i++;
      const q = quantifierAt(s, i);
      if (q) {
        if (q.repeats && group.repeats)
          return 'must not repeat a group that itself repeats (such as (a+)+): it can take exponential time';
        i += q.length;
        if (q.repeats) group.repeats = true;
      }
      if (group.repeats) stack[stack.length - 1].repeats = true;
      continue;
    } else {
      i++;
    }
    const q = quantifierAt(s, i);
    if (q) {
      if (q.repeats) stack[stack.length - 1].repeats = true;
      i += q.length;
    }
  }
  return undefined;
}
