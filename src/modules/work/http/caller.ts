import type { Principal } from '../../../core/auth/principal';
import type { CallerRef } from '../commands/work-facts';

/** The caller as the work policies need it (scopes, own member, role), from the request's principal. */
export function callerOf(p: Principal): CallerRef {
  return {
    scopes: p.effectiveScopes,
    memberId: p.membership?.memberId,
    roleId: p.membership?.roleId,
    credentialScopes: p.credential.kind === 'member_token' ? undefined : p.credential.scopes,
  };
}
