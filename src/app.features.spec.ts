import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Client } from 'pg';
import { getMetadataArgsStorage } from 'typeorm';
import { createTestDatabase } from '../test/support/database';
import { ENTITIES } from './app.entities';
import { MIGRATIONS } from './app.migrations';
import { FEATURES } from './app.module';
import { CORE_MIGRATIONS } from './core/database/migrations';
import { featureOf, FeatureModule, migrationTimestamp } from './core/features/feature';

/**
 * A feature plugs in through its @Feature descriptor and one line in app.module.ts; these
 * checks catch what a descriptor forgot (an entity or migration that would then silently
 * not exist) and keep core free of any feature.
 */

const SRC = __dirname;
const MODULES = join(SRC, 'modules');
const CORE = join(SRC, 'core');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
function exportedClasses(file: string): Function[] {
  const exports = require(file) as Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  return Object.values(exports).filter((v): v is Function => typeof v === 'function');
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
const isMigration = (c: Function) =>
  typeof (c.prototype as { up?: unknown } | undefined)?.up === 'function' &&
  typeof (c.prototype as { down?: unknown }).down === 'function';

const featureFolders = readdirSync(MODULES).filter((d) => statSync(join(MODULES, d)).isDirectory());

/** The feature module declared in a folder's top-level *.module.ts. */
function featureIn(folder: string): FeatureModule {
  const modules = readdirSync(join(MODULES, folder))
    .filter((f) => f.endsWith('.module.ts'))
    .flatMap((f) => exportedClasses(join(MODULES, folder, f)))
    .filter((c) => {
      try {
        featureOf(c);
        return true;
      } catch {
        return false;
      }
    });
  expect({ folder, features: modules.length }).toEqual({ folder, features: 1 });
  return modules[0];
}

describe('features plug in through @Feature', () => {
  it('lists every feature folder once in app.module.ts, named after its folder', () => {
    for (const folder of featureFolders) {
      const feature = featureIn(folder);
      expect(FEATURES).toContain(feature);
      expect(featureOf(feature).name).toBe(folder);
    }
    expect(FEATURES).toHaveLength(featureFolders.length);
  });

  it("registers every entity under src/modules, declared by its own feature's descriptor", () => {
    const entityTargets = new Set(getMetadataArgsStorage().tables.map((t) => t.target));
    let seen = 0;
    for (const folder of featureFolders) {
      const declared = featureOf(featureIn(folder)).entities ?? [];
      for (const file of tsFiles(join(MODULES, folder)))
        for (const c of exportedClasses(file).filter((x) => entityTargets.has(x))) {
          seen++;
          expect({ entity: c.name, declaredBy: folder }).toEqual({
            entity: c.name,
            declaredBy: declared.includes(c) ? folder : 'nobody',
          });
          expect(ENTITIES).toContain(c);
        }
    }
    expect(ENTITIES).toHaveLength(seen);
  });

  it("registers every migration under src/modules by its own feature, and core's in core", () => {
    let seen = 0;
    for (const folder of featureFolders) {
      const declared = featureOf(featureIn(folder)).migrations ?? [];
      for (const file of tsFiles(join(MODULES, folder)))
        for (const c of exportedClasses(file).filter(isMigration)) {
          seen++;
          expect({
            migration: c.name,
            declaredBy: declared.includes(c as never) ? folder : 'nobody',
          }).toEqual({
            migration: c.name,
            declaredBy: folder,
          });
        }
    }
    for (const file of tsFiles(join(CORE, 'database', 'migrations')))
      for (const c of exportedClasses(file).filter(isMigration)) {
        seen++;
        expect(CORE_MIGRATIONS).toContain(c);
      }
    expect(MIGRATIONS).toHaveLength(seen);
  });

  it('runs migrations in timestamp order, keeping the order of those already shipped', () => {
    const names = MIGRATIONS.map((m) => m.name);
    const stamps = MIGRATIONS.map(migrationTimestamp);
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    // The order of app.migrations.ts before features declared their own. The tables
    // Identity1764000002000 created for roles and api-keys moved into those features'
    // own idempotent migrations, placed right after it (src/app.migrations.spec.ts).
    const split = ['MemberRolesTable1764000002010', 'ApiKeysTable1764000002020'];
    expect(names.filter((n) => !split.includes(n)).slice(0, 10)).toEqual([
      'Initial1764000000000',
      'EventStore1764000000100',
      'Projections1764000000200',
      'Workspaces1764000001000',
      'Identity1764000002000',
      'IdentityMembers1764000002500',
      'AuditLog1764000003000',
      'MemberRoleAccess1764000004000',
      'ApiKeyUsage1764000004100',
      'ResourceVersions1764000005000',
    ]);
  });
});

describe('versioned resources', () => {
  it('gives every table a feature declares versioned its version and stream_revision columns', async () => {
    const tables = FEATURES.flatMap((f) => featureOf(f).versionedResources ?? []);
    expect(tables.length).toBeGreaterThan(0);
    const db = await createTestDatabase();
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name IN ('version', 'stream_revision')`,
      );
      for (const table of tables)
        expect({
          table,
          columns: rows
            .filter((r) => r.table_name === table)
            .map((r) => r.column_name)
            .sort(),
        }).toEqual({ table, columns: ['stream_revision', 'version'] });
    } finally {
      await client.end();
      await db.drop();
    }
  });
});

describe('core knows no feature', () => {
  const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

  it('has no file under src/core importing from src/modules or the composition root', () => {
    const offenders: string[] = [];
    const allCore = readdirSync(CORE, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(CORE, f));
    expect(allCore.length).toBeGreaterThan(50);
    for (const file of allCore) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(SRC, resolve(dirname(file), spec));
        if (target.startsWith('modules') || /^app\.[a-z]+$/.test(target) || target.startsWith('cli'))
          offenders.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('would notice such an import', () => {
    const sample = `import { X } from '../../modules/identity/identity.module';\nconst y = require('../app.module');`;
    const found = [...sample.matchAll(IMPORT)].map((m) => m[1]);
    expect(found).toEqual(['../../modules/identity/identity.module', '../app.module']);
  });
});

describe('features meet through their public surface', () => {
  const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  const LITERAL = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g;
  const SQL_TABLE =
    /\b(?:from|join|update|into|table|exists)\s+(?:if\s+(?:not\s+)?exists\s+)?(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

  /** Which feature owns each read-model table: the table names of its @Feature entities. */
  function tableOwners(): Map<string, string> {
    const owners = new Map<string, string>();
    const tables = getMetadataArgsStorage().tables;
    for (const folder of featureFolders)
      for (const entity of featureOf(featureIn(folder)).entities ?? []) {
        const name = tables.find((t) => t.target === entity)?.name;
        if (name) owners.set(name, folder);
      }
    return owners;
  }

  /** A module's files may import another module only through its index.ts. */
  function importOffenders(file: string, text: string): string[] {
    const own = relative(MODULES, file).split(/[\\/]/)[0];
    const found: string[] = [];
    for (const [, spec] of text.matchAll(IMPORT)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(MODULES, resolve(dirname(file), spec)).split(/[\\/]/);
      if (target[0] === '..' || target[0] === own) continue;
      const publicSurface = target.length === 1 || (target.length === 2 && target[1] === 'index');
      if (!publicSurface) found.push(`${relative(SRC, file)} imports ${spec}`);
    }
    return found;
  }

  /** SQL in a module's string literals naming a table another feature owns. */
  function sqlOffenders(file: string, text: string, owners: Map<string, string>): string[] {
    const own = relative(MODULES, file).split(/[\\/]/)[0];
    const found: string[] = [];
    for (const [literal] of text.matchAll(LITERAL))
      for (const [, table] of literal.matchAll(SQL_TABLE)) {
        const owner = owners.get(table.toLowerCase());
        if (owner && owner !== own) found.push(`${relative(SRC, file)} names ${owner}'s table ${table}`);
      }
    return found;
  }

  const moduleFiles = () =>
    readdirSync(MODULES, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => join(MODULES, f));

  it("has no module importing another module's files other than its index.ts", () => {
    const files = moduleFiles();
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((f) => importOffenders(f, readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it("has no module whose SQL names another feature's table", () => {
    const owners = tableOwners();
    expect(owners.get('members')).toBe('identity');
    expect(owners.get('member_roles')).toBe('roles');
    const offenders = moduleFiles()
      .filter((f) => !f.endsWith('.spec.ts'))
      .flatMap((f) => sqlOffenders(f, readFileSync(f, 'utf8'), owners));
    expect(offenders).toEqual([]);
  });

  it('loads every module file first, on its own (no cycle through index.ts reads a class before it is defined)', () => {
    const failures: string[] = [];
    for (const file of moduleFiles().filter((f) => !f.endsWith('.spec.ts')))
      jest.isolateModules(() => {
        try {
          require(file);
        } catch (error) {
          failures.push(`${relative(SRC, file)}: ${(error as Error).message}`);
        }
      });
    expect(failures).toEqual([]);
  });

  it('would notice such an import and such SQL', () => {
    const file = join(MODULES, 'workspaces', 'queries', 'sample.ts');
    const sample = [
      `import { ListRoleHoldersQuery } from '../../identity';`,
      `import { GetWorkspaceQuery } from './workspace.queries';`,
      `import { memberStream } from '../../identity/domain/identity.events';`,
      `const rows = db.query(\`SELECT id FROM workspaces w JOIN members m ON m.workspace_id = w.id\`);`,
      `// a comment about reading from members is not SQL`,
    ].join('\n');
    expect(importOffenders(file, sample)).toEqual([
      'modules/workspaces/queries/sample.ts imports ../../identity/domain/identity.events',
    ]);
    expect(sqlOffenders(file, sample, tableOwners())).toEqual([
      "modules/workspaces/queries/sample.ts names identity's table members",
    ]);
  });
});
