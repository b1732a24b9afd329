import { ValidationError } from './domain-errors';

/**
 * A form body as an object of strings. A parameter sent twice becomes an array, so the
 * route can refuse it (RFC 6749 §3.1: parameters MUST NOT be included more than once)
 * instead of one of the values winning silently.
 */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(text);
  } catch {
    throw new ValidationError('The request body is not valid form encoding');
  }
  for (const [key, value] of params) {
    if (key === '__proto__' || key === 'constructor')
      throw new ValidationError(`${key}: the key "${key}" is not allowed`);
    const had = out[key];
    out[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return { ...out };
}
