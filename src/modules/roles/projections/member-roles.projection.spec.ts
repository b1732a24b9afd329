import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import { CLAIM_FENCED } from '../../../core/claims/claims';
import { createDataSource } from '../../../core/database/data-source';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { MemberRolesProjection } from './member-roles.projection';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
const stored = (type: string, data: unknown, revision: bigint): StoredEvent => ({
  id: `0190a6c4-0000-7000-8000-00000000000${revision}`,
  type,
  data,
  metadata: meta(),
  streamName: 'memberrole-7',
  revision,
  position: { commit: 1n, prepare: revision },
});

/**
 * A name claim taken over on EventStoreDB fences the role's stream (core/claims): the
 * row's stream_revision must follow, or every If-Match write of the role would be 412.
 */
describe('MemberRolesProjection', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase();
    ds = createDataSource({ url: db.url, entities: ENTITIES, migrations: [], poolSize: 1 });
    await ds.initialize();
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('moves stream_revision on a claim fence, and nothing the role shows', async () => {
    const projection = new MemberRolesProjection();
    const created = {
      roleId: 7,
      workspaceId: ws,
      name: 'Sales',
      permissions: [],
      builtIn: null,
      createdAt: '2026-11-21T10:00:00.000Z',
    };
    await ds.transaction(async (em) => {
      await projection.handle(stored('MemberRoleCreated', created, 0n), em);
      await projection.handle(
        stored(CLAIM_FENCED, { kind: 'role_name', by: 'memberrole-9', fencedAt: '' }, 1n),
        em,
      );
    });
    const [row] = (await ds.query(
      `SELECT name, version, stream_revision::text AS rev FROM member_roles WHERE id = 7`,
    )) as {
      name: string;
      version: number;
      rev: string;
    }[];
    expect(row).toEqual({ name: 'Sales', version: 1, rev: '1' });
  });
});
