/**
 * `Content-Disposition: attachment` with the file's name (RFC 6266): an ASCII fallback in
 * `filename` (quotes, backslashes and anything outside printable ASCII replaced) and the
 * exact name in `filename*` (RFC 8187, UTF-8, percent-encoded). Always an attachment: a
 * browser saves the bytes rather than rendering them on the API's origin.
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
