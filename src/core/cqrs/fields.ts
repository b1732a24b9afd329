import { PreconditionFailedError, ValidationError } from '../http/domain-errors';

/**
 * Small checks deciders share: a required text (trimmed, not empty, bounded), an optional
 * one (bounded, null when absent), and a decider-side If-Match against an entity's own
 * version (for entities that share a stream, where the stream revision cannot serve).
 */
export function requiredText(field: string, raw: string, max: number): string {
  const value = raw.trim();
  if (!value) throw new ValidationError(`${field}: must not be empty`);
  if (value.length > max) throw new ValidationError(`${field}: must be at most ${max} characters`);
  return value;
}

export function optionalText(field: string, raw: string | null | undefined, max: number): string | null {
  if (raw === undefined || raw === null) return null;
  if (raw.length > max) throw new ValidationError(`${field}: must be at most ${max} characters`);
  return raw;
}

/** 412 unless If-Match (when sent) names the current version; the detail gives the ETag to reload. */
export function assertIfMatch(ifMatch: readonly number[] | undefined, version: number): void {
  if (ifMatch !== undefined && !ifMatch.includes(version))
    throw new PreconditionFailedError(
      `If-Match: the resource has changed since that version (it is now at "${version}"); reload it and try again`,
    );
}
