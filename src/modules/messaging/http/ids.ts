import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import type { Caller } from '../domain/messaging-access.policy';

export function callerOf(p: Principal): Caller {
  return {
    scopes: p.effectiveScopes,
    memberId: p.membership?.memberId,
    roleId: p.membership?.roleId,
    credentialScopes: p.credential.kind === 'member_token' ? undefined : p.credential.scopes,
  };
}

/** A path id that is not a positive 32-bit integer names nothing: 404, like an unknown id. */
export function pathId(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
    throw new NotFoundError(`${what} not found`);
  return Number(raw);
}
