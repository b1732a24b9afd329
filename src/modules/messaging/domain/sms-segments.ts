/**
 * SMS encoding and segment count (issue 11, item 13), computed before anything is sent:
 * a message whose characters all exist in the GSM 03.38 alphabet goes as GSM-7 (160
 * septets in one segment, 153 per segment once concatenated; extension characters such
 * as `{` or `€` take two septets and never straddle segments), anything else as UCS-2
 * (70 UTF-16 code units, 67 per segment; a surrogate pair is never split).
 */
export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  segments: number;
}

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM_BASIC);
const EXTENSION = new Set(GSM_EXTENSION);

function gsmSegments(text: string): number | undefined {
  const units: number[] = [];
  for (const ch of text) {
    if (BASIC.has(ch)) units.push(1);
    else if (EXTENSION.has(ch)) units.push(2);
    else return undefined;
  }
  const total = units.reduce((a, b) => a + b, 0);
  if (total <= 160) return 1;
  return packed(units, 153);
}

function ucs2Segments(text: string): number {
  // Code points: a surrogate pair (2 units) stays in one segment.
  const units = [...text].map((ch) => ch.length);
  const total = units.reduce((a, b) => a + b, 0);
  if (total <= 70) return 1;
  return packed(units, 67);
}

/** Segments needed when no character (of `size` units) may be split across two. */
function packed(units: readonly number[], perSegment: number): number {
  let segments = 1;
  let used = 0;
  for (const size of units) {
    if (used + size > perSegment) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return segments;
}

export function smsSegments(text: string): SmsSegments {
  const gsm = gsmSegments(text);
  if (gsm !== undefined) return { encoding: 'GSM-7', segments: Math.max(1, gsm) };
  return { encoding: 'UCS-2', segments: ucs2Segments(text) };
}
