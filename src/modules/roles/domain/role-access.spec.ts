import { mergeFileAccess, mergeSiteAudience } from './role-access';
import { builtInNamed, normalizeRoleName } from './role-aliases';

describe('role access merge (copy)', () => {
  it('unites Site audiences', () => {
    expect(
      mergeSiteAudience({ allSites: false, siteIds: [3, 1] }, { allSites: false, siteIds: [2, 3] }),
    ).toEqual({ allSites: false, siteIds: [1, 2, 3] });
    expect(
      mergeSiteAudience({ allSites: false, siteIds: [] }, { allSites: true, siteIds: [] }).allSites,
    ).toBe(true);
  });

  it('unites file and folder grants, the higher level winning', () => {
    expect(
      mergeFileAccess(
        {
          folders: [
            { id: 1, level: 'admin' },
            { id: 2, level: 'read' },
          ],
          files: [],
        },
        {
          folders: [
            { id: 1, level: 'read' },
            { id: 2, level: 'write' },
          ],
          files: [{ id: 9, level: 'read' }],
        },
      ),
    ).toEqual({
      folders: [
        { id: 1, level: 'admin' },
        { id: 2, level: 'write' },
      ],
      files: [{ id: 9, level: 'read' }],
    });
  });
});

describe('role names', () => {
  it('normalises case, blanks, underscores and hyphens (custom names among themselves)', () => {
    expect(normalizeRoleName('  Platform_Support ')).toBe('platform support');
    expect(normalizeRoleName('platform--support')).toBe('platform support');
  });

  it("reserves only a built-in role's exact name", () => {
    expect(builtInNamed('Manager')?.key).toBe('manager');
    expect(builtInNamed(' Platform Support ')?.key).toBe('platform_support');
    for (const name of [
      'manager',
      'MANAGER',
      'Admin',
      'platform support',
      'Platform_Support',
      'users',
      'agent',
    ])
      expect(builtInNamed(name)).toBeUndefined();
  });
});
