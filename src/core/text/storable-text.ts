/**
 * A lone UTF-16 surrogate: JSON.parse accepts `"\ud800"`, but JSON.stringify writes it back
 * as that escape, which PostgreSQL's jsonb refuses (a 500 at append time).
 */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `s` as PostgreSQL text and jsonb can hold it: cut to `max` UTF-16 units without ending on
 * half a surrogate pair, then each NUL and each half of a pair replaced by `replacement`
 * (U+FFFD by default, so a reader sees something was there). For text no request check
 * has seen: a provider's webhook fields, decoded mail, a model's or a receiver's answer.
 */
export function storableText(s: string, { max = Infinity, replacement = '\ufffd' } = {}): string {
  let out = s;
  if (s.length > max) {
    const last = s.charCodeAt(max - 1);
    out = s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
  }
  return out.replaceAll('\u0000', replacement).replace(LONE_SURROGATES, replacement);
}
