import { mergeFileAccess, mergeSiteAudience } from './role-access';
import { builtInDuplicatedBy, normalizeRoleName } from './role-aliases';

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

describe('duplicate role names', () => {
  it('normalises case, blanks, underscores and hyphens', () => {
    expect(normalizeRoleName('  Platform_Support ')).toBe('platform support');
    expect(normalizeRoleName('platform--support')).toBe('platform support');
  });

  it.each([
    ['manager', 'manager'],
    ['MANAGER', 'manager'],
    ['Admin', 'manager'],
    ['administrator', 'manager'],
    ['platform-support', 'platform_support'],
    ['Users', 'user'],
    ['member', 'user'],
    ['agents', 'agent'],
    ['guest', 'external'],
  ])('%s duplicates %s', (name, key) => {
    expect(builtInDuplicatedBy(name)?.key).toBe(key);
  });

  it('does not treat other names as duplicates', () => {
    expect(builtInDuplicatedBy('Sales')).toBeUndefined();
    expect(builtInDuplicatedBy('Managers of sales')).toBeUndefined();
  });
});
