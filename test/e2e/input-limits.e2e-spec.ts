import { startTestApp, TestApp, TestResponse } from '../support/app';
import { BootstrapResult } from '../../src/modules/identity/bootstrap/bootstrap.service';

/**
 * Input PostgreSQL cannot hold (NUL, unpaired surrogates, numbers beyond a column) and input
 * the validation layer cannot walk (deep nesting) is refused with 400 naming where it is,
 * and appends nothing. These used to be 500s.
 */
describe('Input limits: NUL, surrogates, numeric bounds, nesting depth (e2e)', () => {
  let t: TestApp;
  let a: BootstrapResult;
  beforeAll(async () => {
    t = await startTestApp();
    a = await t.bootstrap();
  });
  afterAll(() => t.close());

  async function expect400(res: TestResponse, detail: string | RegExp): Promise<void> {
    expect(res.status).toBe(400);
    if (typeof detail === 'string') expect(res.body).toEqual({ detail });
    else expect(res.body.detail).toMatch(detail);
    await t.expectEvents(res, []);
  }

  describe('NUL characters', () => {
    it('are refused in any body string, naming the field, on every kind of write', async () => {
      const wid = a.workspaceId;
      const key = a.apiKey;
      await expect400(
        await t.request('PUT', `/w/${wid}/members/${a.memberId}`, { token: key, body: { name: 'a\u0000b' } }),
        'name: must not contain NUL characters',
      );
      await expect400(
        await t.request('POST', `/w/${wid}/create-signup`, {
          token: key,
          body: { member: { email: 'nul@example.com', name: 'x\u0000' } },
        }),
        'member.name: must not contain NUL characters',
      );
      await expect400(
        await t.request('PUT', `/w/${wid}`, { token: key, body: { settings: { timezone: '\u0000' } } }),
        'settings.timezone: must not contain NUL characters',
      );
      await expect400(
        await t.request('POST', `/w/${wid}/member-roles`, {
          token: key,
          body: { name: 'ok', permissions: ['members:read', 'members:\u0000'] },
        }),
        'permissions.1: must not contain NUL characters',
      );
      await expect400(
        await t.request('POST', '/me/api-keys', {
          token: key,
          body: { name: 'k\u0000', scopes: ['members:read'] },
        }),
        'name: must not contain NUL characters',
      );
      await expect400(
        await t.request('POST', `/w/${wid}/invitations`, {
          token: key,
          body: { email: 'a\u0000@example.com' },
        }),
        'email: must not contain NUL characters',
      );
      await expect400(
        await t.request('POST', `/w/${wid}/members/import`, {
          token: key,
          body: { members: [{ email: 'ok@example.com' }, { email: 'b@example.com', externalId: '\u0000' }] },
        }),
        'members.1.externalId: must not contain NUL characters',
      );
      await expect400(
        await t.request('PUT', '/me', { token: key, body: { name: '\u0000' } }),
        'name: must not contain NUL characters',
      );
    });

    it('are refused in field names', async () => {
      await expect400(
        await t.request('PUT', `/w/${a.workspaceId}`, {
          token: a.apiKey,
          body: { settings: { 'time\u0000zone': 'UTC' } },
        }),
        'settings: field names must not contain NUL characters',
      );
    });

    it('are refused in query values and path segments, naming the parameter', async () => {
      const wid = a.workspaceId;
      await expect400(
        await t.request('GET', `/w/${wid}/members?search=a%00b`, { token: a.apiKey }),
        'query search: must not contain NUL characters',
      );
      for (const name of ['type', 'stream', 'search'])
        await expect400(
          await t.request('GET', `/w/${wid}/events?${name}=a%00b`, { token: a.apiKey }),
          `query ${name}: must not contain NUL characters`,
        );
      await expect400(
        await t.request('GET', `/w/${wid}/events/streams/a%00b`, { token: a.apiKey }),
        'path parameter streamName: must not contain NUL characters',
      );
    });
  });

  it('refuses unpaired UTF-16 surrogates, which PostgreSQL jsonb cannot store', async () => {
    await expect400(
      await t.request('PUT', `/w/${a.workspaceId}/members/${a.memberId}`, {
        token: a.apiKey,
        raw: '{"name":"a\\ud800b"}',
      }),
      'name: must not contain unpaired UTF-16 surrogates',
    );
    // A well-formed pair (an emoji written as two escapes) is fine.
    const ok = await t.request('PUT', `/w/${a.workspaceId}/members/${a.memberId}`, {
      token: a.apiKey,
      raw: '{"name":"ok \\ud83d\\udca9"}',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.name).toBe('ok \u{1F4A9}');
  });

  describe('numeric bounds', () => {
    it('bounds page so the offset fits, on every list', async () => {
      const wid = a.workspaceId;
      const lists = [
        '/w',
        `/w/${wid}/members`,
        `/w/${wid}/invitations`,
        `/w/${wid}/member-roles`,
        '/me/api-keys',
        `/w/${wid}/events`,
        `/w/${wid}/events/streams/workspace-${wid}`,
      ];
      for (const list of lists) {
        const res = await t.request('GET', `${list}?page=99999999999999999999`, { token: a.apiKey });
        expect({ list, status: res.status, body: res.body }).toEqual({
          list,
          status: 400,
          body: { detail: 'page: must not be greater than 1000000000' },
        });
      }
      const last = await t.request('GET', `/w/${wid}/members?page=1000000000&pageSize=1000`, {
        token: a.apiKey,
      });
      expect(last.status).toBe(200);
      expect(last.body).toMatchObject({ items: [], page: 1000000000, pageSize: 1000 });
    });

    it('refuses ids beyond an integer column in queries and bodies, naming the field', async () => {
      const wid = a.workspaceId;
      const tooBig = 'must not be greater than 2147483647';
      await expect400(
        await t.request('GET', `/w/${wid}/members?roleId=99999999999`, { token: a.apiKey }),
        `roleId: ${tooBig}`,
      );
      await expect400(
        await t.request('GET', `/w/${wid}/members?memberRoleId=2147483648`, { token: a.apiKey }),
        `memberRoleId: ${tooBig}`,
      );
      await expect400(
        await t.request('PUT', `/w/${wid}`, {
          token: a.apiKey,
          body: { settings: { defaultMemberRoleId: 1e20 } },
        }),
        `settings.defaultMemberRoleId: ${tooBig}`,
      );
      await expect400(
        await t.request('POST', `/w/${wid}/member-roles/1/merge`, {
          token: a.apiKey,
          body: { targetRoleId: 2 ** 31 },
        }),
        `targetRoleId: ${tooBig}`,
      );
      await expect400(
        await t.request('PUT', `/w/${wid}/members/${a.memberId}`, {
          token: a.apiKey,
          body: { memberRoleId: 2 ** 40 },
        }),
        `memberRoleId: ${tooBig}`,
      );
      await expect400(
        await t.request('POST', `/w/${wid}/invitations`, {
          token: a.apiKey,
          body: { email: 'big@example.com', memberRoleId: 2 ** 40 },
        }),
        `memberRoleId: ${tooBig}`,
      );
    });

    it('answers path ids beyond an integer column 404, like any id that names nothing', async () => {
      const wid = a.workspaceId;
      for (const path of [
        `/w/${wid}/members/99999999999999999999`,
        `/w/${wid}/members/2147483648`,
        `/w/${wid}/member-roles/99999999999999999999`,
        `/w/${wid}/member-roles/abc`,
      ]) {
        const res = await t.request('GET', path, { token: a.apiKey });
        expect({ path, status: res.status, detail: typeof res.body.detail }).toEqual({
          path,
          status: 404,
          detail: 'string',
        });
      }
    });
  });

  describe('nesting depth', () => {
    function nested(depth: number): unknown {
      let v: unknown = 'x';
      for (let i = 1; i < depth; i++) v = { a: v };
      return v;
    }

    it('refuses a body nested deeper than 64 levels before validation', async () => {
      await expect400(
        await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: nested(2000) }),
        'body: nested deeper than 64 levels of objects and arrays',
      );
      await expect400(
        await t.request('PUT', `/w/${a.workspaceId}`, {
          token: a.apiKey,
          raw: `{"name":${'['.repeat(65)}${']'.repeat(65)}}`,
        }),
        'body: nested deeper than 64 levels of objects and arrays',
      );
    });

    it('lets 64 levels through to validation', async () => {
      // 64 levels: the top-level object holding a chain of 63 more.
      const res = await t.request('PUT', `/w/${a.workspaceId}`, {
        token: a.apiKey,
        body: { name: nested(64) },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^name: /);
      expect(res.body.detail).not.toMatch(/nested/);
    });
  });

  describe('null and shape where the documentation does not allow them', () => {
    it('refuses null for a field not documented as nullable', async () => {
      await expect400(
        await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: { member: { email: null, phone: '+14155550100' } },
        }),
        'member.email: must not be null',
      );
      await expect400(
        await t.request('PUT', `/w/${a.workspaceId}/member-roles/1`, {
          token: a.apiKey,
          body: { permissions: null },
        }),
        'permissions: must not be null',
      );
    });

    it('still accepts null where it is documented (it clears the value)', async () => {
      const res = await t.request('PUT', `/w/${a.workspaceId}/members/${a.memberId}`, {
        token: a.apiKey,
        body: { name: null },
      });
      expect(res.status).toBe(200);
      expect(res.body.name).toBeNull();
    });

    it('refuses an array where one object is declared', async () => {
      const role = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
        token: a.apiKey,
        body: { name: 'shape', permissions: [] },
      });
      expect(role.status).toBe(201);
      await expect400(
        await t.request('PUT', `/w/${a.workspaceId}/member-roles/${role.body.id}`, {
          token: a.apiKey,
          body: { fileAccess: [] },
        }),
        'fileAccess: must be an object',
      );
    });
  });
});
