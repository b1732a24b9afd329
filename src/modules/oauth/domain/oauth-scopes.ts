import { intersectScopes, isValidScope } from '../../../core/auth/scopes';

/**
 * The spec's OAuth scopes. Two are shorthands: `data:X` stands for `datatypes:X` and
 * `records:X`, `task:X` for `assignments:X`; the others are scope names of their own.
 * Every `<namespace>:<level>` of the scope table may be asked for as well. `account:admin`
 * is not offered: an app acts in the workspace chosen at consent, never on the account.
 */
export const OAUTH_SCOPES = [
  'workspace:read',
  'workspace:write',
  'members:read',
  'members:write',
  'data:read',
  'data:write',
  'chats:read',
  'chats:write',
  'task:read',
  'task:write',
] as const;

const SHORTHANDS: Record<string, readonly string[]> = {
  data: ['datatypes', 'records'],
  task: ['assignments'],
};

export const OAUTH_SCOPE_MAX = 64;
export const OAUTH_SCOPES_MAX_COUNT = 100;

export function isOAuthScope(scope: string): boolean {
  if ((OAUTH_SCOPES as readonly string[]).includes(scope)) return true;
  return isValidScope(scope);
}

/** The scope names a token's holder is checked against (shorthands expanded, duplicates gone). */
export function expandOAuthScopes(scopes: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of scopes) {
    const [ns, level] = s.split(':');
    const targets = SHORTHANDS[ns];
    if (targets) targets.forEach((t) => out.add(`${t}:${level}`));
    else out.add(s);
  }
  return [...out].sort();
}

/**
 * Granted scopes as the app allows them now: after `PUT /me/apps/{id}` narrowed the app,
 * a grant, code or token issued before keeps at most the app's current scopes. A scope the
 * app still lists stays as written; any other keeps only what the app's scopes imply of it
 * (`data:write` under an app now holding `records:read` is `records:read`), so nothing is
 * ever wider than the app.
 */
export function narrowToApp(granted: readonly string[], appScopes: readonly string[]): string[] {
  const app = expandOAuthScopes(appScopes);
  const out = new Set<string>();
  for (const s of granted) {
    if (appScopes.includes(s)) out.add(s);
    else intersectScopes(expandOAuthScopes([s]), app).forEach((n) => out.add(n));
  }
  return [...out];
}

/**
 * A space-separated `scope` parameter (RFC 6749 §3.3) as a list; undefined when a scope is
 * unknown or the list is malformed (the caller answers invalid_scope).
 */
export function parseScopeParameter(raw: string): string[] | undefined {
  const parts = raw.split(' ').filter((s) => s !== '');
  if (!parts.length || parts.length > OAUTH_SCOPES_MAX_COUNT) return undefined;
  if (parts.some((s) => s.length > OAUTH_SCOPE_MAX || !isOAuthScope(s))) return undefined;
  return [...new Set(parts)];
}

const LEVEL_WORDS: Record<string, string> = {
  read: 'See',
  write: 'See and change',
  admin: 'See, change and delete',
};

const NAMESPACE_WORDS: Record<string, string> = {
  workspace: 'the workspace and its settings',
  members: 'members and their profiles',
  data: 'data types and records (may include health information)',
  chats: 'chats and their messages',
  task: 'tasks and assignments',
  records: 'records (may include health information)',
  datatypes: 'data types (forms)',
  assignments: 'assignments',
  member_roles: 'member roles',
  dm: 'direct messages',
  phones: 'phone numbers',
};

/** The consent page's words for a scope: "See and change chats and their messages". */
export function scopeInWords(scope: string): string {
  const [ns, level] = scope.split(':');
  return `${LEVEL_WORDS[level] ?? level} ${NAMESPACE_WORDS[ns] ?? ns.replace(/_/g, ' ')}`;
}
