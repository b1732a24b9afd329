/**
 * What a role reaches beyond its scopes: the Sites whose audience it belongs to and
 * grants on Files and Folders. Both stay editable on built-in roles (SPEC, Roles rule 1)
 * and are what a merge copies across or discards (rule 5).
 */
export type AccessLevel = 'read' | 'write' | 'admin';
export const ACCESS_LEVELS: readonly AccessLevel[] = ['read', 'write', 'admin'];

export interface SiteAudience {
  /** Members of the role are in the audience of every Site. */
  allSites: boolean;
  /** Otherwise, of these Sites (ids ascending, no repeats). */
  siteIds: number[];
}

export interface ResourceGrant {
  id: number;
  level: AccessLevel;
}

export interface FileAccess {
  folders: ResourceGrant[];
  files: ResourceGrant[];
}

export const EMPTY_SITE_AUDIENCE: SiteAudience = { allSites: false, siteIds: [] };
export const EMPTY_FILE_ACCESS: FileAccess = { folders: [], files: [] };

const RANK: Record<AccessLevel, number> = { read: 1, write: 2, admin: 3 };

/** One canonical form, so equal access compares equal (sorted, deduplicated). */
export function normalizeSiteAudience(a: SiteAudience): SiteAudience {
  return { allSites: a.allSites, siteIds: [...new Set(a.siteIds)].sort((x, y) => x - y) };
}

function normalizeGrants(grants: readonly ResourceGrant[]): ResourceGrant[] {
  const best = new Map<number, AccessLevel>();
  for (const g of grants) {
    const current = best.get(g.id);
    if (!current || RANK[g.level] > RANK[current]) best.set(g.id, g.level);
  }
  return [...best.entries()].sort(([a], [b]) => a - b).map(([id, level]) => ({ id, level }));
}

export function normalizeFileAccess(a: FileAccess): FileAccess {
  return { folders: normalizeGrants(a.folders), files: normalizeGrants(a.files) };
}

/** Copying a duplicate's access onto its target: the union, the higher level winning. */
export function mergeSiteAudience(target: SiteAudience, source: SiteAudience): SiteAudience {
  return normalizeSiteAudience({
    allSites: target.allSites || source.allSites,
    siteIds: [...target.siteIds, ...source.siteIds],
  });
}

export function mergeFileAccess(target: FileAccess, source: FileAccess): FileAccess {
  return normalizeFileAccess({
    folders: [...target.folders, ...source.folders],
    files: [...target.files, ...source.files],
  });
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
