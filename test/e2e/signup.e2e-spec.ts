import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';

describe('create-signup (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("reads the workspace's default role from its stream once across signups, and a new default applies to the next signup", async () => {
    const a = await t.bootstrap();
    const roles = await t.request('GET', `/w/${a.workspaceId}/member-roles?pageSize=100`, {
      token: a.apiKey,
    });
    const role = (name: string): number => roles.body.items.find((r: { name: string }) => r.name === name).id;
    const signup = async (email: string): Promise<number> => {
      const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: a.apiKey,
        body: { member: { email } },
      });
      expect(res.status).toBe(201);
      return res.body.member.memberRoleId as number;
    };
    const stream = `workspace-${a.workspaceId}`;
    const readStream = t.store.readStream.bind(t.store);
    let workspaceReads = 0;
    t.store.readStream = ((name: string, ...rest: unknown[]) => {
      if (name === stream) workspaceReads++;
      return (readStream as (...args: unknown[]) => unknown)(name, ...rest);
    }) as typeof t.store.readStream;
    try {
      expect(await signup('default-1@example.com')).toBe(role('User'));
      expect(await signup('default-2@example.com')).toBe(role('User'));
      expect(await signup('default-3@example.com')).toBe(role('User'));
      expect(workspaceReads).toBeLessThanOrEqual(1);
      const changed = await t.request('PUT', `/w/${a.workspaceId}`, {
        token: a.apiKey,
        body: { settings: { defaultMemberRoleId: role('External') } },
      });
      expect(changed.status).toBe(200);
      expect(await signup('default-4@example.com')).toBe(role('External'));
    } finally {
      t.store.readStream = readStream;
    }
  });

  it('creates an account and a member with the built-in User role, normalised, and a member token', async () => {
    const a = await t.bootstrap();
    const roles = await t.request('GET', `/w/${a.workspaceId}/member-roles?pageSize=100`, {
      token: a.apiKey,
    });
    const user = roles.body.items.find((r: { name: string }) => r.name === 'User');
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: {
        member: {
          email: ' Ann.Smith@Example.COM ',
          phone: '+1 (415) 555-0123',
          name: 'Ann Smith',
          externalId: 'crm-1',
        },
      },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['account', 'member', 'token', 'wasCreated']);
    expect(res.body).toMatchObject({
      wasCreated: true,
      account: { email: 'ann.smith@example.com', phone: '+14155550123', name: 'Ann Smith' },
      member: { email: 'ann.smith@example.com', memberRoleId: user.id },
    });
    expect(res.body.account.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(res.body.member).sort()).toEqual(['email', 'id', 'memberRoleId']);
    expect(res.body.token).toMatch(/^wsm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);

    const memberId = res.body.member.id;
    // The uniqueness claims of email, phone and externalId are rows of `claims` written in the
    // same transaction (core/claims): on PostgreSQL no MemberValueClaimed events any more.
    await t.expectEvents(res, [
      {
        type: 'MemberCreated',
        stream: `member-${memberId}`,
        data: {
          memberId,
          workspaceId: a.workspaceId,
          accountUuid: res.body.account.uuid,
          email: 'ann.smith@example.com',
          phone: '+14155550123',
          name: 'Ann Smith',
          externalId: 'crm-1',
          memberRoleId: user.id,
          kind: 'person',
          notifySms: false,
        },
      },
      {
        type: 'AccountRegistered',
        stream: `account-${res.body.account.uuid}`,
        data: { email: 'ann.smith@example.com' },
      },
      {
        type: 'MemberTokenIssued',
        stream: /^membertoken-/,
        data: { workspaceId: a.workspaceId, memberId, accountUuid: res.body.account.uuid },
      },
    ]);
    // The token itself is never stored, only its hash.
    const events = await t.eventsOf(res);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(res.body.token);

    const got = await t.request('GET', `/w/${a.workspaceId}/members/${memberId}`, { token: a.apiKey });
    expect(got.body).toMatchObject({
      id: memberId,
      email: 'ann.smith@example.com',
      phone: '+14155550123',
      externalId: 'crm-1',
      status: 'active',
    });
  });

  it('a new member is written in one transaction: claims, member, account and token commit together', async () => {
    const a = await t.bootstrap();
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'atomic@example.com', externalId: 'crm-atomic' } },
    });
    expect(res.status).toBe(201);
    const events = await t.eventsOf(res);
    expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'AccountRegistered', 'MemberTokenIssued']);
    // One transaction: no reader (projection, auditor) can ever see a member without its account.
    expect(new Set(events.map((e) => e.position.commit)).size).toBe(1);
    const claims = await t.app
      .get(DataSource)
      .query(`SELECT kind, owner FROM claims WHERE scope = $1 AND owner = $2 ORDER BY kind`, [
        a.workspaceId,
        `member-${res.body.member.id}`,
      ]);
    expect(claims).toEqual([
      { kind: 'member_email', owner: `member-${res.body.member.id}` },
      { kind: 'member_external_id', owner: `member-${res.body.member.id}` },
    ]);
  });

  it('a value an archived member gave up is taken by the next signup, in one transaction', async () => {
    const a = await t.bootstrap();
    const first = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'reused@example.com' } },
    });
    // Archiving frees the email: its claim row goes in the archive's transaction.
    const archived = await t.request('DELETE', `/w/${a.workspaceId}/members/${first.body.member.id}`, {
      token: a.apiKey,
    });
    expect(archived.status).toBeLessThan(300);
    const again = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'reused@example.com' } },
    });
    expect(again.status).toBe(201);
    expect(again.body.wasCreated).toBe(true);
    expect(again.body.member.id).not.toBe(first.body.member.id);
    await t.expectEvents(again, [
      { type: 'MemberCreated', data: { memberId: again.body.member.id } },
      { type: 'AccountRegistered', data: { email: 'reused@example.com' } },
      { type: 'MemberTokenIssued', data: { memberId: again.body.member.id } },
    ]);
    expect(new Set((await t.eventsOf(again)).map((e) => e.position.commit)).size).toBe(1);
  });

  it('finds an existing member by externalId, then email, then phone: wasCreated false, no duplicate', async () => {
    const a = await t.bootstrap();
    const first = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'bob@example.com', phone: '+442079460958', externalId: 'ext-bob' } },
    });
    expect(first.status).toBe(201);
    const id = first.body.member.id;
    for (const member of [
      { externalId: 'ext-bob', email: 'someone-else@example.com' },
      { email: 'BOB@example.com' },
      { phone: '+44 20 7946 0958' },
      { email: 'new-address@example.com', phone: '+442079460958' },
    ]) {
      const again = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: a.apiKey,
        body: { member },
      });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        wasCreated: false,
        member: { id, email: 'bob@example.com' },
        account: { uuid: first.body.account.uuid },
      });
      expect(again.body.token).not.toBe(first.body.token);
      await t.expectEvents(again, [{ type: 'MemberTokenIssued', data: { memberId: id } }]);
    }
    const list = await t.request('GET', `/w/${a.workspaceId}/members?pageSize=100`, { token: a.apiKey });
    expect(list.body.items.filter((m: { email: string }) => m.email === 'bob@example.com')).toHaveLength(1);
  });

  it('values of two members: the one holding the externalId is found, whichever value the write refused first', async () => {
    const a = await t.bootstrap();
    const byEmail = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann@example.com' } },
    });
    const byExternalId = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { phone: '+442079460959', externalId: 'ext-ann' } },
    });
    expect([byEmail.status, byExternalId.status]).toEqual([201, 201]);
    const again = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann@example.com', externalId: 'ext-ann' } },
    });
    expect(again.status).toBe(200);
    expect(again.body.member.id).toBe(byExternalId.body.member.id);
    const byPhone = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann@example.com', phone: '+442079460959' } },
    });
    expect(byPhone.status).toBe(200);
    expect(byPhone.body.member.id).toBe(byEmail.body.member.id);
    await t.expectEvents(byPhone, [
      { type: 'MemberTokenIssued', data: { memberId: byEmail.body.member.id } },
    ]);
  });

  it('thirty concurrent signups of different people: each account, member and token is in the read models as its response says', async () => {
    // Concurrent signups reach the members projection in batches, where their accounts,
    // members and tokens are written in one multi-row statement.
    const a = await t.bootstrap();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: {
            member: { email: `person${i}@example.com`, phone: `+1415555${String(1000 + i)}`, name: `P ${i}` },
          },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));
    const db = t.app.get(DataSource);
    for (const [i, r] of results.entries()) {
      const [account] = (await db.query(
        `SELECT email, registered_email, phone, name, email_verified FROM accounts WHERE uuid = $1`,
        [r.body.account.uuid],
      )) as unknown[];
      expect(account).toEqual({
        email: `person${i}@example.com`,
        registered_email: `person${i}@example.com`,
        phone: `+1415555${1000 + i}`,
        name: `P ${i}`,
        email_verified: true,
      });
      const member = await t.request('GET', `/w/${a.workspaceId}/members/${r.body.member.id}`, {
        token: a.apiKey,
      });
      expect(member.body).toMatchObject({
        accountUuid: r.body.account.uuid,
        email: `person${i}@example.com`,
      });
      const me = await t.request('GET', '/me', { token: r.body.token });
      expect(me.status).toBe(200);
      expect(me.body.memberships.map((m: { member: { id: number } }) => m.member.id)).toEqual([
        r.body.member.id,
      ]);
    }
    const list = await t.request('GET', `/w/${a.workspaceId}/members?status=active`, { token: a.apiKey });
    expect(list.body.total).toBe(31);
  });

  it('twenty concurrent signups with one email make exactly one member', async () => {
    const a = await t.bootstrap();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: { member: { email: i % 2 ? 'race@example.com' : 'RACE@example.com', name: `Racer ${i}` } },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201].sort());
    const ids = new Set(results.map((r) => r.body.member.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.body.wasCreated)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.account.uuid)).size).toBe(1);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?email=race@example.com`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(1);
    // Every token works, for that one member.
    for (const r of results) {
      const me = await t.request('GET', '/me', { token: r.body.token });
      expect(me.status).toBe(200);
      expect(me.body.memberships.map((m: { member: { id: number } }) => m.member.id)).toEqual([...ids]);
    }
  });

  it('twenty concurrent signups mixing email and phone of one person make one member', async () => {
    const a = await t.bootstrap();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: {
            member:
              i % 3 === 0
                ? { phone: '+14155550199' }
                : i % 3 === 1
                  ? { email: 'mix@example.com', phone: '+14155550199' }
                  : { email: 'mix@example.com' },
          },
        }),
      ),
    );
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?pageSize=100`, { token: a.apiKey });
    const people = list.body.items.filter(
      (m: { email: string; phone: string }) => m.email === 'mix@example.com' || m.phone === '+14155550199',
    );
    // Phone-only and email-only signups racing first may make two members (one per value), never more,
    // and never two holding the same value.
    expect(new Set(people.map((m: { email: string }) => m.email).filter(Boolean)).size).toBe(
      people.filter((m: { email: string }) => m.email).length,
    );
    expect(people.filter((m: { phone: string }) => m.phone === '+14155550199')).toHaveLength(1);
    expect(people.filter((m: { email: string }) => m.email === 'mix@example.com')).toHaveLength(1);
  });

  it('refuses bad input with 400 naming the field, and appends nothing', async () => {
    const a = await t.bootstrap();
    const cases: [unknown, RegExp][] = [
      [{ member: {} }, /^member: one of email or phone is required/],
      [{}, /^member/],
      [{ member: { email: 'not-an-email' } }, /^member\.email/],
      [{ member: { phone: '555-0123' } }, /^member\.phone/],
      [{ member: { phone: 'call me' } }, /^member\.phone/],
      [{ member: { email: 'a@b.co', colour: 'red' } }, /member\.colour: unknown field/],
      [
        { member: { email: 'a@b.co' }, data: { patients: { externalId: 'p1', values: { age: 3 } } } },
        /^data\.patients:/,
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, { token: a.apiKey, body });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const empty = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ok@b.co' }, data: {} },
    });
    expect(empty.status).toBe(201);
  });

  it('gives new members the workspace default role when one is set', async () => {
    const a = await t.bootstrap();
    const role = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Patient', permissions: ['chats:read'] },
    });
    expect(role.status).toBe(201);
    const put = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: role.body.id } },
    });
    expect(put.status).toBe(200);
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'patient@example.com' } },
    });
    expect(res.body.member.memberRoleId).toBe(role.body.id);
  });

  it('needs members:write', async () => {
    const a = await t.bootstrap();
    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'x@example.com' } },
    });
    const denied = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: signup.body.token,
      body: { member: { email: 'y@example.com' } },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/members:write/);
    const anonymous = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      body: { member: { email: 'y@example.com' } },
    });
    expect(anonymous.status).toBe(401);
  });
});
