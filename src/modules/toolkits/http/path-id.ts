import { NotFoundError } from '../../../core/http/domain-errors';
import { MAX_ID } from '../../../core/http/validation';

/** A path id that is not a positive 32-bit integer names nothing: 404, like an unknown id. */
export function pathIdOf(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) throw new NotFoundError(`${what} not found`);
  return Number(raw);
}
