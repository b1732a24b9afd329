/** How many leading bytes content sniffing looks at (file-type's own window). */
export const SNIFF_BYTES = 4100;

export const OCTET_STREAM = 'application/octet-stream';
export const PLAIN_TEXT = 'text/plain; charset=utf-8';

// Text is UTF-8 without control characters other than tab, line feed, form feed and carriage return.
// eslint-disable-next-line no-control-regex
const BINARY_CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

/**
 * The content type a file is stored and served with, from its bytes only: what the magic
 * numbers say (`sniffed`, from file-type), else plain text when its first bytes are UTF-8
 * text, else application/octet-stream. The client's declared type is never used: a page
 * uploaded as `image/png` must not come back as `text/html`.
 */
export function contentTypeOf(head: Uint8Array, sniffed: string | undefined): string {
  if (sniffed) return sniffed;
  if (head.length === 0) return OCTET_STREAM;
  let text: string;
  try {
    // stream: true, so a multi-byte character cut at the end of the window is not an error.
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return OCTET_STREAM;
  }
  return BINARY_CONTROL.test(text) ? OCTET_STREAM : PLAIN_TEXT;
}
