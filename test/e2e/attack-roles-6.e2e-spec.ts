import type Redis from 'ioredis';
import { REDIS } from '../../src/core/redis/redis';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';

const ROUNDS = 10;

/**
 * Attack on a role's deletion racing the writes that make something refer to the role.
 * The deletion decides from the read models (holders, pending invitations, the workspace
 * default) and the writes from the role's own stream: sent together, both used to
 * succeed, leaving a member (an invitation, the workspace default) with a role that no
 * longer exists. After every round: either the deletion was refused (409) or the
 * reference was (400 naming the field), never both; a role that exists may be held, a
 * deleted one is held by nobody; and the events appended say the same.
 */
describe('Attack: a role deleted while it is being handed out (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let roles: Record<string, number>;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap('Roles race');
    wid = a.workspaceId;
    key = a.apiKey;
    const listed = await t.request('GET', `/w/${wid}/member-roles?pageSize=100`, { token: key });
    roles = Object.fromEntries(
      (listed.body.items as { id: number; name: string }[]).map((r) => [r.name, r.id]),
    );
  });
  afterAll(() => t.close());

  const newRole = async (): Promise<number> => {
    const res = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: { name: `Racer ${++n}`, permissions: ['members:read'] },
    });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };
  const del = (roleId: number) => t.request('DELETE', `/w/${wid}/member-roles/${roleId}`, { token: key });
  const roleExists = async (roleId: number): Promise<boolean> => {
    const res = await t.request('GET', `/w/${wid}/member-roles/${roleId}`, { token: key });
    expect([200, 404]).toContain(res.status);
    return res.status === 200;
  };
  const holders = async (roleId: number): Promise<number[]> => {
    const res = await t.request('GET', `/w/${wid}/members?roleId=${roleId}&status=all&pageSize=100`, {
      token: key,
    });
    expect(res.status).toBe(200);
    return (res.body.items as { id: number }[]).map((m) => m.id);
  };

  /** The deletion's outcome: 204 with MemberRoleDeleted, or 409 with nothing appended. */
  async function deletion(res: TestResponse, roleId: number): Promise<boolean> {
    if (res.status === 204) {
      await t.expectEvents(res, [{ type: 'MemberRoleDeleted', stream: `memberrole-${roleId}` }]);
      return true;
    }
    expect(res.status).toBe(409);
    await t.expectEvents(res, []);
    return false;
  }

  /** A refused reference: 400 naming `field` and the role, with nothing appended. */
  async function refused(res: TestResponse, field: string, roleId: number): Promise<void> {
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain(`${field}: `);
    expect(res.body.detail).toContain(`role ${roleId}`);
    await t.expectEvents(res, []);
  }

  it('PUT memberRoleId racing DELETE of the role: never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roleId = await newRole();
      const signed = await t.request('POST', `/w/${wid}/create-signup`, {
        token: key,
        body: { member: { email: `put-${round}-${process.pid}@example.com` } },
      });
      expect(signed.status).toBe(201);
      const memberId = signed.body.member.id as number;
      const [put, gone] = await Promise.all([
        t.request('PUT', `/w/${wid}/members/${memberId}`, { token: key, body: { memberRoleId: roleId } }),
        del(roleId),
      ]);
      const deleted = await deletion(gone, roleId);
      const member = await t.request('GET', `/w/${wid}/members/${memberId}`, { token: key });
      if (deleted) {
        await refused(put, 'memberRoleId', roleId);
        expect(member.body.memberRoleId).toBe(roles.User);
        expect(await roleExists(roleId)).toBe(false);
      } else {
        expect(put.status).toBe(200);
        await t.expectEvents(put, [
          {
            type: 'MemberUpdated',
            stream: `member-${memberId}`,
            data: { changes: { memberRoleId: roleId } },
          },
        ]);
        expect(member.body.memberRoleId).toBe(roleId);
        expect(await roleExists(roleId)).toBe(true);
      }
      expect(await holders(roleId)).toEqual(deleted ? [] : [memberId]);
    }
  });

  it('an import naming the role racing its DELETE: never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roleId = await newRole();
      const email = `import-${round}-${process.pid}@example.com`;
      const [imported, gone] = await Promise.all([
        t.request('POST', `/w/${wid}/members/import`, {
          token: key,
          body: { members: [{ email, memberRoleId: roleId }] },
        }),
        del(roleId),
      ]);
      expect(imported.status).toBe(200);
      const deleted = await deletion(gone, roleId);
      const events = await t.eventsOf(imported);
      if (deleted) {
        expect(events).toEqual([]);
        expect(JSON.stringify(imported.body.errors)).toContain(`role ${roleId}`);
        expect(await holders(roleId)).toEqual([]);
      } else {
        expect(events.map((e) => e.type)).toEqual(['MemberCreated']);
        expect(events[0].data).toMatchObject({ email, memberRoleId: roleId });
        expect(await holders(roleId)).toHaveLength(1);
        expect(await roleExists(roleId)).toBe(true);
      }
    }
  });

  it('an invitation with the role racing its DELETE: never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roleId = await newRole();
      const [invited, gone] = await Promise.all([
        t.request('POST', `/w/${wid}/invitations`, {
          token: key,
          body: { email: `invitee-${round}-${process.pid}@example.com`, memberRoleId: roleId },
        }),
        del(roleId),
      ]);
      const deleted = await deletion(gone, roleId);
      if (deleted) {
        await refused(invited, 'memberRoleId', roleId);
      } else {
        expect(invited.status).toBe(201);
        await t.expectEvents(invited, [{ type: 'InvitationCreated', data: { memberRoleId: roleId } }]);
        expect(await roleExists(roleId)).toBe(true);
      }
    }
  });

  it('the workspace default set to the role racing its DELETE: never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roleId = await newRole();
      const [put, gone] = await Promise.all([
        t.request('PUT', `/w/${wid}`, { token: key, body: { settings: { defaultMemberRoleId: roleId } } }),
        del(roleId),
      ]);
      const deleted = await deletion(gone, roleId);
      const ws = await t.request('GET', `/w/${wid}`, { token: key });
      if (deleted) {
        await refused(put, 'settings.defaultMemberRoleId', roleId);
        expect(ws.body.settings.defaultMemberRoleId).not.toBe(roleId);
      } else {
        expect(put.status).toBe(200);
        expect(ws.body.settings.defaultMemberRoleId).toBe(roleId);
        expect(await roleExists(roleId)).toBe(true);
        // Back to User, so the next round's deletion is not refused for being the default.
        const back = await t.request('PUT', `/w/${wid}`, {
          token: key,
          body: { settings: { defaultMemberRoleId: null } },
        });
        expect(back.status).toBe(200);
      }
    }
  });

  it('signups under a default role switched away and deleted meanwhile: a deleted role is held by nobody', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const roleId = await newRole();
      const set = await t.request('PUT', `/w/${wid}`, {
        token: key,
        body: { settings: { defaultMemberRoleId: roleId } },
      });
      expect(set.status).toBe(200);
      const signup = (i: number) =>
        t.request('POST', `/w/${wid}/create-signup`, {
          token: key,
          body: { member: { email: `default-${round}-${i}-${process.pid}@example.com` } },
        });
      const switchAndDelete = async () => {
        const back = await t.request('PUT', `/w/${wid}`, {
          token: key,
          body: { settings: { defaultMemberRoleId: null } },
        });
        expect(back.status).toBe(200);
        return del(roleId);
      };
      const [gone, ...signups] = await Promise.all([switchAndDelete(), signup(0), signup(1), signup(2)]);
      const deleted = await deletion(gone, roleId);
      for (const s of signups) {
        expect(s.status).toBe(201);
        // A signup names no role: it gets the default as it stood, or User, never a deleted role.
        expect([roleId, roles.User]).toContain(s.body.member.memberRoleId);
        if (deleted) expect(s.body.member.memberRoleId).toBe(roles.User);
      }
      expect(await holders(roleId)).toHaveLength(
        deleted ? 0 : signups.filter((s) => s.body.member.memberRoleId === roleId).length,
      );
    }
  });
});

/**
 * The same race across two processes of one deployment: the assignment through the API
 * process, the deletion through the other (ROLE=all). The gate is shared through Redis,
 * not process memory.
 */
describe('Attack: a role deleted while it is being handed out, across two processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlW: string;
  let urlA: string;
  let key: string;
  let wid: string;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = serviceEnv(db.url, prefix, {});
    const { all, api } = await startAllAndApi(env, ['roles6-w', 'roles6-a']);
    urlW = all.url;
    urlA = api.url;
    processes = [all.proc, api.proc];
    ({ apiKey: key, workspaceId: wid } = await bootstrapWithCli(env, 'Roles race 2', 'roles6@example.com'));
  }, 240_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call(base: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}/w/${wid}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
  }

  it('PUT memberRoleId on one process, DELETE on the other: never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const role = await call(urlW, 'POST', '/member-roles', { name: `Racer ${round}`, permissions: [] });
      expect(role.status).toBe(201);
      const roleId = role.body.id as number;
      const signed = await call(urlW, 'POST', '/create-signup', {
        member: { email: `two-${round}@example.com` },
      });
      expect(signed.status).toBe(201);
      const memberId = signed.body.member.id as number;
      const [put, gone] = await Promise.all([
        call(urlA, 'PUT', `/members/${memberId}`, { memberRoleId: roleId }),
        call(urlW, 'DELETE', `/member-roles/${roleId}`),
      ]);
      expect([put.status, gone.status].sort()).toEqual(gone.status === 204 ? [204, 400] : [200, 409]);
      const member = await call(urlW, 'GET', `/members/${memberId}`);
      const after = await call(urlW, 'GET', `/member-roles/${roleId}`);
      if (gone.status === 204) {
        expect(put.body.detail).toContain('memberRoleId: ');
        expect(after.status).toBe(404);
        expect(member.body.memberRoleId).not.toBe(roleId);
      } else {
        expect(after.status).toBe(200);
        expect(member.body.memberRoleId).toBe(roleId);
      }
    }
  });
});

/**
 * What is left of a process that died half-way: a deletion that marked itself in Redis and
 * never finished, a write that entered and never left. Both fail closed, with nothing
 * appended, until they lapse; a lapsed one is no obstacle.
 */
describe('Attack: a role deletion or assignment that died half-way (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let redis: Redis;

  beforeAll(async () => {
    t = await startTestApp({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '1500' } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Roles crash'));
    redis = t.app.get<Redis>(REDIS);
  });
  afterAll(() => t.close());

  const gateKey = (roleId: number, what: 'writes' | 'removals') =>
    `${t.config.redisPrefix}:references:{memberrole-${roleId}}:${what}`;

  async function roleAndMember(name: string): Promise<{ roleId: number; memberId: number }> {
    const role = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: { name, permissions: ['members:read'] },
    });
    expect(role.status).toBe(201);
    const signed = await t.request('POST', `/w/${wid}/create-signup`, {
      token: key,
      body: { member: { email: `${name.replace(/ /g, '-')}-${process.pid}@example.com` } },
    });
    expect(signed.status).toBe(201);
    return { roleId: role.body.id, memberId: signed.body.member.id };
  }

  it('a deletion that never finished holds assignments of the role off (409), then lets them through', async () => {
    const { roleId, memberId } = await roleAndMember('Dead deletion');
    await redis.zadd(gateKey(roleId, 'removals'), Date.now() + 60_000, 'dead-process');
    const put = () =>
      t.request('PUT', `/w/${wid}/members/${memberId}`, { token: key, body: { memberRoleId: roleId } });
    const held = await put();
    expect(held.status).toBe(409);
    expect(held.body.detail).toBe(`memberRoleId: role ${roleId} is being deleted; retry`);
    await t.expectEvents(held, []);
    // Lapsed (its score is past): no obstacle.
    await redis.zadd(gateKey(roleId, 'removals'), Date.now() - 1, 'dead-process');
    const through = await put();
    expect(through.status).toBe(200);
    await t.expectEvents(through, [{ type: 'MemberUpdated', data: { changes: { memberRoleId: roleId } } }]);
  });

  it('an assignment that never left holds the deletion off (409, nothing deleted), then lets it through', async () => {
    const { roleId } = await roleAndMember('Dead assignment');
    await redis.zadd(gateKey(roleId, 'writes'), Date.now() + 60_000, 'dead-process');
    const refused = await t.request('DELETE', `/w/${wid}/member-roles/${roleId}`, { token: key });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(`Role ${roleId} is being given to members`);
    await t.expectEvents(refused, []);
    expect((await t.request('GET', `/w/${wid}/member-roles/${roleId}`, { token: key })).status).toBe(200);
    await redis.zrem(gateKey(roleId, 'writes'), 'dead-process');
    const deleted = await t.request('DELETE', `/w/${wid}/member-roles/${roleId}`, { token: key });
    expect(deleted.status).toBe(204);
    await t.expectEvents(deleted, [{ type: 'MemberRoleDeleted', stream: `memberrole-${roleId}` }]);
  });
});
