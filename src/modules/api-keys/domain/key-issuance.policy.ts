import { grants, isAccountScope } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';
import { checkPermissions } from '../../roles';

const DAY_MS = 86_400_000;

/** What the key that asks for a new key holds: the ceiling of what it may hand out. */
export interface KeyIssuer {
  scopes: readonly string[];
  expiresAt: string;
}

/**
 * The scopes a key may carry: workspace scopes (`<namespace>:<level>`, checked as roles
 * check them) and account scopes (`account:admin`), which only credentials carry.
 * The caller's order, repeats dropped. Unknown scopes are a 400 naming them.
 */
export function checkKeyScopes(scopes: readonly string[]): string[] {
  checkPermissions(
    scopes.filter((s) => !isAccountScope(s)),
    'scopes',
  );
  return [...new Set(scopes)];
}

/**
 * No key mints a broader or longer-lived key (a leaked narrow key must stay narrow):
 * every scope of the new key must be granted by the issuer's own scopes (admin ⊇ write ⊇
 * read; account:admin only by itself), and the new key may not expire after the issuer.
 * Both refusals are 403: the request is well formed, the credential lacks the power.
 */
export function assertKeyWithinIssuer(issuer: KeyIssuer, scopes: readonly string[], expiresAt: string): void {
  const missing = scopes.filter((s) => !grants(issuer.scopes, s));
  if (missing.length) {
    throw new ForbiddenError(
      `scopes: this key lacks ${missing.join(', ')}, so a key it creates cannot have ${missing.length > 1 ? 'them' : 'it'}`,
    );
  }
  if (Date.parse(expiresAt) > Date.parse(issuer.expiresAt)) {
    throw new ForbiddenError(
      `expiresInDays: this key expires at ${issuer.expiresAt}, so a key it creates cannot expire later (${expiresAt})`,
    );
  }
}

/**
 * Expiry of a new key: `days` from now when asked for; otherwise the default lifetime,
 * cut short to the issuer's own expiry so that omitting the field never fails.
 */
export function newKeyExpiry(
  now: string,
  days: number | undefined,
  defaultDays: number,
  issuer: KeyIssuer,
): string {
  if (days !== undefined) return new Date(Date.parse(now) + days * DAY_MS).toISOString();
  const wanted = Date.parse(now) + defaultDays * DAY_MS;
  return new Date(Math.min(wanted, Date.parse(issuer.expiresAt))).toISOString();
}
