/** Scope form `<namespace>:<level>`; admin implies write implies read (SPEC, "Scopes"). */
export const SCOPE_NAMESPACES = [
  'agents',
  'analytics',
  'apps',
  'assignments',
  'automations',
  'calendars',
  'chats',
  'datatypes',
  'devices',
  'dm',
  'experiments',
  'files',
  'inboxes',
  'journeys',
  'labels',
  'member_roles',
  'members',
  'operator',
  'phones',
  'records',
  'sites',
  'webhooks',
  'workflows',
  'workspace',
] as const;
export const SCOPE_LEVELS = ['read', 'write', 'admin'] as const;

export type ScopeNamespace = (typeof SCOPE_NAMESPACES)[number];
export type ScopeLevel = (typeof SCOPE_LEVELS)[number];

const RANK: Record<ScopeLevel, number> = { read: 1, write: 2, admin: 3 };

export function parseScope(scope: string): { namespace: ScopeNamespace; level: ScopeLevel } | undefined {
  const [ns, level, extra] = scope.split(':');
  if (extra !== undefined) return undefined;
  if (!(SCOPE_NAMESPACES as readonly string[]).includes(ns)) return undefined;
  if (!(SCOPE_LEVELS as readonly string[]).includes(level)) return undefined;
  return { namespace: ns as ScopeNamespace, level: level as ScopeLevel };
}

export function isValidScope(scope: string): boolean {
  return parseScope(scope) !== undefined;
}

/**
 * Every grantable scope (what Manager and Platform Support hold): each namespace, in the
 * spec's order, at read, write and admin (24 × 3 = 72).
 */
export const ALL_SCOPES: readonly string[] = SCOPE_NAMESPACES.flatMap((ns) =>
  SCOPE_LEVELS.map((level) => `${ns}:${level}`),
);

/**
 * Per scope list, the highest level per namespace it grants. Remembered per list object:
 * the lists a request checks come from the credential cache, so a Manager's 72 scopes
 * are parsed once per cache entry rather than on every request. Scope lists are never
 * mutated (readonly throughout).
 */
const levelsOf = new WeakMap<readonly string[], Map<string, number>>();

function levels(scopes: readonly string[]): Map<string, number> {
  const known = levelsOf.get(scopes);
  if (known) return known;
  const out = new Map<string, number>();
  for (const s of scopes) {
    const p = parseScope(s);
    if (p) out.set(p.namespace, Math.max(out.get(p.namespace) ?? 0, RANK[p.level]));
  }
  levelsOf.set(scopes, out);
  return out;
}

/**
 * Account-level scopes: what a credential may do to its own account (manage its API keys,
 * accept invitations). Only API keys and OAuth grants carry them; roles never do, so a
 * workspace's effective scopes (credential ∩ role) never contain them.
 */
export const ACCOUNT_ADMIN = 'account:admin';
export const ACCOUNT_SCOPES: readonly string[] = [ACCOUNT_ADMIN];

export function isAccountScope(scope: string): boolean {
  return ACCOUNT_SCOPES.includes(scope);
}

export function grants(scopes: readonly string[], required: string): boolean {
  // One level only: nothing implies account:admin but itself.
  if (isAccountScope(required)) return scopes.includes(required);
  const p = parseScope(required);
  if (!p) return false;
  return (levels(scopes).get(p.namespace) ?? 0) >= RANK[p.level];
}

/** Intersection with implication: per namespace, the lower of the two levels. */
export function intersectScopes(a: readonly string[], b: readonly string[]): string[] {
  const la = levels(a);
  const lb = levels(b);
  const out: string[] = [];
  for (const [ns, rank] of la) {
    const r = Math.min(rank, lb.get(ns) ?? 0);
    if (r > 0) out.push(`${ns}:${SCOPE_LEVELS[r - 1]}`);
  }
  return out.sort();
}

const intersections = new WeakMap<readonly string[], WeakMap<readonly string[], readonly string[]>>();

/**
 * intersectScopes, remembered per pair of list objects (frozen): the guard intersects a
 * credential's scopes with its role's on every request, both from the credential cache,
 * so the same pair comes back until the cache drops them; a fresh array each time would
 * also make `grants` parse it again (levels() remembers per list object).
 */
export function intersectScopesOnce(a: readonly string[], b: readonly string[]): readonly string[] {
  let byB = intersections.get(a);
  if (!byB) intersections.set(a, (byB = new WeakMap()));
  let out = byB.get(b);
  if (!out) byB.set(b, (out = Object.freeze(intersectScopes(a, b))));
  return out;
}
