import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole, importMembers, keyWithScopes, signup } from '../support/identity-fixtures';

describe('members (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists members with filters and pagination', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const ann = await signup(t, a.workspaceId, a.apiKey, {
      email: 'ann@example.com',
      phone: '+14155550101',
      externalId: 'ext-ann',
    });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });
    await importMembers(t, a.workspaceId, a.apiKey, [{ name: 'Bot', kind: 'agent' }]);
    const list = (q: string) => t.request('GET', `/w/${a.workspaceId}/members${q}`, { token: a.apiKey });

    const all = await list('');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 4, page: 1, pageSize: 50 });
    expect(all.body.items[0]).toMatchObject({
      id: a.memberId,
      memberRoleId: roles.Manager,
      kind: 'person',
      status: 'active',
    });
    // The page is JSON text written by PostgreSQL: each item is exactly the member's own
    // representation (same keys, values and types, timestamps included), sent as JSON.
    expect(all.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8$/);
    for (const item of all.body.items as { id: number }[]) {
      const one = await t.request('GET', `/w/${a.workspaceId}/members/${item.id}`, { token: a.apiKey });
      expect(Object.keys(item)).toEqual(Object.keys(one.body));
      expect(item).toStrictEqual(one.body);
    }
    expect(all.body.items.map((m: { id: number }) => m.id)).toEqual([
      a.memberId,
      ann.member.id,
      bob.member.id,
      expect.any(Number),
    ]);
    expect((await list('?email=ANN@example.com')).body.items.map((m: { id: number }) => m.id)).toEqual([
      ann.member.id,
    ]);
    expect(
      (await list('?phone=%2B1%20415%20555%200101')).body.items.map((m: { id: number }) => m.id),
    ).toEqual([ann.member.id]);
    expect((await list('?externalId=ext-ann')).body.items.map((m: { id: number }) => m.id)).toEqual([
      ann.member.id,
    ]);
    expect((await list(`?roleId=${roles.User}`)).body.items.map((m: { id: number }) => m.id)).toEqual([
      ann.member.id,
      bob.member.id,
    ]);
    expect((await list(`?roleId=${roles.Agent}`)).body.items.map((m: { kind: string }) => m.kind)).toEqual([
      'agent',
    ]);
    const paged = await list('?page=2&page_size=3');
    expect(paged.body).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(paged.body.items).toHaveLength(1);
    // A page past the end still counts what the filters match.
    const beyond = await list('?page=3&page_size=3');
    expect(beyond.body).toEqual({ items: [], total: 4, page: 3, pageSize: 3 });
    expect((await list('?externalId=nobody')).body).toMatchObject({ items: [], total: 0 });

    const badPhone = await list('?phone=garbage');
    expect(badPhone.status).toBe(400);
    expect(badPhone.body.detail).toMatch(/^phone:/);
    const badStatus = await list('?status=gone');
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.detail).toMatch(/^status:/);
  });

  it('gets one member; unknown and malformed ids are 404', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com', name: 'Ann' });
    const got = await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, { token: a.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: ann.member.id,
      workspaceId: a.workspaceId,
      accountUuid: ann.account.uuid,
      email: 'ann@example.com',
      phone: null,
      name: 'Ann',
      externalId: null,
      memberRoleId: ann.member.memberRoleId,
      kind: 'person',
      status: 'active',
      notifySms: false,
      notifyEmail: false,
      notifyVoice: false,
      timezone: null,
      agentModel: null,
      agentInstructions: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    for (const id of ['999999', 'abc', '0', '-1']) {
      const res = await t.request('GET', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey });
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe('Member not found');
    }
  });

  it('PUT changes fields, appends MemberUpdated with the changes and the full snapshot, and answers with the result', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com', externalId: 'e1' });
    const res = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: {
        name: 'Ann B',
        phone: '+44 20 7946 0958',
        notifySms: true,
        notifyEmail: false,
        memberRoleId: roles.External,
        externalId: 'e2',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Ann B',
      phone: '+442079460958',
      notifySms: true,
      memberRoleId: roles.External,
      externalId: 'e2',
    });
    const events = await t.eventsOf(res);
    const updated = events.filter((e) => e.type === 'MemberUpdated');
    expect(updated).toHaveLength(1);
    expect(updated[0].streamName).toBe(`member-${ann.member.id}`);
    expect(updated[0].data).toEqual({
      memberId: ann.member.id,
      workspaceId: a.workspaceId,
      changes: {
        name: 'Ann B',
        phone: '+442079460958',
        notifySms: true,
        memberRoleId: roles.External,
        externalId: 'e2',
      },
      member: expect.objectContaining({
        id: ann.member.id,
        email: 'ann@example.com',
        name: 'Ann B',
        phone: '+442079460958',
        externalId: 'e2',
        status: 'active',
      }),
      updatedAt: expect.any(String),
    });
    // The claims follow in the update's transaction (rows of `claims`, no events on
    // PostgreSQL): phone and new externalId taken, the old externalId given back.
    expect(events.map((e) => e.type)).toEqual(['MemberUpdated']);
    const reuse = await signup(t, a.workspaceId, a.apiKey, { email: 'other@example.com', externalId: 'e1' });
    expect(reuse.wasCreated).toBe(true);

    const same = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { name: 'Ann B' },
    });
    expect(same.status).toBe(200);
    expect(await t.eventsOf(same)).toEqual([]);
    const clear = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { phone: null },
    });
    expect(clear.body.phone).toBeNull();
  });

  it('PUT refuses a role id out of range or not of this workspace and overlong values, the list a role filter out of range, naming the field', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const rolesB = await builtInRoles(t, b.workspaceId, b.apiKey);
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const cases: [unknown, RegExp][] = [
      [{ memberRoleId: 99999999999 }, /^memberRoleId: must not be greater than 2147483647/],
      [{ memberRoleId: rolesB.User }, /^memberRoleId: role \d+ does not exist in this workspace/],
      [{ name: 'x'.repeat(201) }, /^name: must be shorter than or equal to 200/],
      [{ email: `${'x'.repeat(250)}@example.com` }, /^email: must be shorter than or equal to 254/],
      [{ externalId: 'x'.repeat(256) }, /^externalId: must be shorter than or equal to 255/],
    ];
    for (const [body, detail] of cases) {
      const res = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
        token: a.apiKey,
        body,
      });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 400,
        detail: expect.stringMatching(detail),
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    for (const param of ['roleId', 'memberRoleId']) {
      const list = await t.request('GET', `/w/${a.workspaceId}/members?${param}=99999999999`, {
        token: a.apiKey,
      });
      expect(list.status).toBe(400);
      expect(list.body.detail).toMatch(new RegExp(`^${param}: must not be greater than 2147483647`));
    }
  });

  it('PUT to an email, phone or externalId another member has is 409 naming the field, and changes nothing', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, {
      email: 'ann@example.com',
      phone: '+14155550111',
      externalId: 'x-ann',
    });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });
    for (const [body, field] of [
      [{ email: 'ANN@example.com' }, 'email'],
      [{ phone: '+1 415 555 0111' }, 'phone'],
      [{ externalId: 'x-ann' }, 'externalId'],
    ] as const) {
      const res = await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
        token: a.apiKey,
        body,
      });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(new RegExp(`^${field}: another member`));
      expect((await t.eventsOf(res)).map((e) => e.type)).not.toContain('MemberUpdated');
    }
    const bobNow = await t.request('GET', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: a.apiKey,
    });
    expect(bobNow.body).toMatchObject({ email: 'bob@example.com', phone: null, externalId: null });
    const bad = await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: a.apiKey,
      body: { email: 'nope' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^email:/);
    const unknown = await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: a.apiKey,
      body: { kind: 'agent' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/kind: unknown field/);
    expect(ann.member.id).not.toBe(bob.member.id);
  });

  it('two concurrent PUTs to one email on different members: one wins, the other is 409', async () => {
    const a = await t.bootstrap();
    const m1 = await signup(t, a.workspaceId, a.apiKey, { email: 'one@example.com' });
    const m2 = await signup(t, a.workspaceId, a.apiKey, { email: 'two@example.com' });
    const [r1, r2] = await Promise.all(
      [m1, m2].map((m) =>
        t.request('PUT', `/w/${a.workspaceId}/members/${m.member.id}`, {
          token: a.apiKey,
          body: { email: 'same@example.com' },
        }),
      ),
    );
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?email=same@example.com`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(1);
  });

  it('DELETE archives (members:admin): hidden from the default list, frees its values, refuses changes', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const writer = await keyWithScopes(t, a.apiKey, ['members:write']);
    const denied = await t.request('DELETE', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: writer,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/members:admin/);

    const res = await t.request('DELETE', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ann.member.id, status: 'archived' });
    await t.expectEvents(res, [
      {
        type: 'MemberArchived',
        stream: `member-${ann.member.id}`,
        data: { memberId: ann.member.id, member: { status: 'archived' } },
      },
    ]);
    const again = await t.request('DELETE', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
    });
    expect(again.status).toBe(200);
    expect(await t.eventsOf(again)).toEqual([]);

    const active = await t.request('GET', `/w/${a.workspaceId}/members?email=ann@example.com`, {
      token: a.apiKey,
    });
    expect(active.body.total).toBe(0);
    const archived = await t.request('GET', `/w/${a.workspaceId}/members?status=archived`, {
      token: a.apiKey,
    });
    expect(archived.body.items.map((m: { id: number }) => m.id)).toEqual([ann.member.id]);
    // The totals of the unfiltered lists come from the counts the projection keeps: they
    // move with the archive (one active fewer, one archived more) and agree with the items.
    const byStatus = async (status: string) =>
      (await t.request('GET', `/w/${a.workspaceId}/members?status=${status}`, { token: a.apiKey })).body as {
        items: { id: number; status: string }[];
        total: number;
      };
    const [nowActive, nowArchived, nowAll] = await Promise.all(['active', 'archived', 'all'].map(byStatus));
    expect(nowArchived.total).toBe(1);
    expect(nowActive.total).toBe(nowActive.items.length);
    expect(nowActive.items.map((m) => m.id)).not.toContain(ann.member.id);
    expect(nowAll.total).toBe(nowActive.total + 1);
    expect(nowAll.items).toHaveLength(nowAll.total);
    const put = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { name: 'X' },
    });
    expect(put.status).toBe(409);
    const back = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    expect(back.wasCreated).toBe(true);
    expect(back.member.id).not.toBe(ann.member.id);
  });

  it('anonymous members are visible only with members:admin', async () => {
    const a = await t.bootstrap();
    const imported = await importMembers(t, a.workspaceId, a.apiKey, [
      { notifySms: false },
      { name: 'Named' },
    ]);
    const [anonymousId, namedId] = imported.body.results.map((r: { memberId: number }) => r.memberId);
    const reader = await keyWithScopes(t, a.apiKey, ['members:write']);
    const asReader = await t.request('GET', `/w/${a.workspaceId}/members`, { token: reader });
    expect(asReader.body.items.map((m: { id: number }) => m.id)).toEqual([a.memberId, namedId]);
    expect(asReader.body.total).toBe(2);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${anonymousId}`, { token: reader })).status,
    ).toBe(404);
    expect(
      (
        await t.request('PUT', `/w/${a.workspaceId}/members/${anonymousId}`, {
          token: reader,
          body: { name: 'X' },
        })
      ).status,
    ).toBe(404);
    const asAdmin = await t.request('GET', `/w/${a.workspaceId}/members`, { token: a.apiKey });
    expect(asAdmin.body.items.map((m: { id: number }) => m.id)).toEqual([a.memberId, anonymousId, namedId]);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${anonymousId}`, { token: a.apiKey })).status,
    ).toBe(200);
  });

  it('reads need members:read, writes members:write; a member reads and updates its own record', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });
    const noMembers = await keyWithScopes(t, a.apiKey, ['chats:read']);
    const reader = await keyWithScopes(t, a.apiKey, ['members:read']);
    expect((await t.request('GET', `/w/${a.workspaceId}/members`, { token: noMembers })).body.detail).toMatch(
      /members:read/,
    );
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${bob.member.id}`, { token: noMembers })).status,
    ).toBe(403);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${bob.member.id}`, { token: reader })).status,
    ).toBe(200);
    const put = await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: reader,
      body: { name: 'X' },
    });
    expect(put.status).toBe(403);
    expect(put.body.detail).toMatch(/members:write/);

    // Self-access with the member token (no scopes of its own).
    const own = await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, { token: ann.token });
    expect(own.status).toBe(200);
    const other = await t.request('GET', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: ann.token,
    });
    expect(other.status).toBe(403);
    expect((await t.request('GET', `/w/${a.workspaceId}/members`, { token: ann.token })).status).toBe(403);
    const self = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: ann.token,
      body: { name: 'Ann', notifySms: true },
    });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ name: 'Ann', notifySms: true });
    const events = await t.eventsOf(self);
    expect(events[0].metadata.actor).toMatchObject({ kind: 'member_token', memberId: ann.member.id });
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const promote = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: ann.token,
      body: { memberRoleId: roles.Manager },
    });
    expect(promote.status).toBe(403);
    expect(promote.body.detail).toMatch(/^memberRoleId:/);
    const ext = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: ann.token,
      body: { externalId: 'mine' },
    });
    expect(ext.status).toBe(403);
    expect(
      (
        await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
          token: ann.token,
          body: { name: 'X' },
        })
      ).status,
    ).toBe(403);
  });

  it('a role can be given only by a credential holding all its scopes (no escalation)', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const analyst = await customRole(t, a.workspaceId, a.apiKey, 'Analyst', ['members:read', 'chats:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['members:write', 'chats:read']);
    const up = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: writer,
      body: { memberRoleId: roles.Manager },
    });
    expect(up.status).toBe(403);
    expect(up.body.detail).toMatch(/^memberRoleId: the role grants .*which this credential does not hold/);
    // Ann holds User now, whose scopes the writer lacks: it cannot take them away either.
    const down = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: writer,
      body: { memberRoleId: analyst },
    });
    expect(down.status).toBe(403);
    expect(down.body.detail).toMatch(/^memberRoleId: the member's current role, User, grants /);
    const readers = await customRole(t, a.workspaceId, a.apiKey, 'Readers', ['chats:read']);
    await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { memberRoleId: readers },
    });
    const ok = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: writer,
      body: { memberRoleId: analyst },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.memberRoleId).toBe(analyst);
  });

  it('follows a role merge: the member record and its next update carry the target role', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const dup = await customRole(t, a.workspaceId, a.apiKey, 'Members', ['members:read']);
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { memberRoleId: dup },
    });
    const merge = await t.request('POST', `/w/${a.workspaceId}/member-roles/${dup}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: roles.User },
    });
    expect(merge.status).toBe(200);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, { token: a.apiKey })).body
        .memberRoleId,
    ).toBe(roles.User);
    const put = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { name: 'Ann' },
    });
    expect(put.body.memberRoleId).toBe(roles.User);
    await t.expectEvents(put, [
      { type: 'MemberUpdated', data: { changes: { name: 'Ann' }, member: { memberRoleId: roles.User } } },
    ]);
    const signin = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    expect(signin.member.memberRoleId).toBe(roles.User);
  });
});
