import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../support/database';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import {
  authorizeUrl,
  createApp,
  OAuthBrowser,
  ownerWithPassword,
  pkcePair,
  REDIRECT,
} from '../support/oauth-browser';
import {
  bootstrapWithCli,
  eventually,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { createDataType, recordsPath } from '../support/records-fixtures';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';

/**
 * Attack on the signup written first and looked up only when refused (externalId, then
 * email, then phone), on ids taken together by concurrent requests, on member tokens
 * written by the members projection, and on the password sign-in finding accounts by the
 * email they registered with (identity's accounts.registered_email): hostile and careless
 * clients over HTTP.
 */
describe('Attack: signup written first, shared ids, tokens and sign-in by registered email (e2e)', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const signup = (
    wid: string,
    key: string,
    member: Record<string, unknown>,
    headers?: Record<string, string>,
  ) => t.request('POST', `/w/${wid}/create-signup`, { token: key, body: { member }, headers });
  const eventCount = async () => Number((await db.query(`SELECT count(*)::int AS n FROM events`))[0].n);
  const streamsOfType = async (type: string, wid: string) =>
    (
      (await db.query(
        `SELECT stream_name FROM events WHERE type = $1 AND coalesce(data->>'workspaceId', metadata->>'workspaceId') = $2`,
        [type, wid],
      )) as { stream_name: string }[]
    ).map((r) => r.stream_name);
  /** Claims of the workspace whose owner is no member stream that was written. */
  const orphanClaims = async (wid: string) =>
    (await db.query(
      `SELECT c.kind, c.owner FROM claims c
        WHERE c.scope = $1 AND c.owner LIKE 'member-%'
          AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_name = c.owner)`,
      [wid],
    )) as unknown[];
  const accountsWith = async (email: string) =>
    Number(
      (
        await db.query(`SELECT count(*)::int AS n FROM accounts WHERE lower(registered_email) = $1`, [email])
      )[0].n,
    );

  /** All answers 200/201, exactly one 201, one member, one account, every token for that member. */
  async function expectOneMember(results: TestResponse[], wid: string): Promise<number> {
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(results.length - 1).fill(200)].sort());
    const ids = new Set(results.map((r) => r.body.member.id as number));
    expect(ids.size).toBe(1);
    expect(new Set(results.map((r) => r.body.account.uuid as string)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.token as string)).size).toBe(results.length);
    const [id] = [...ids];
    expect(await streamsOfType('MemberCreated', wid)).toContain(`member-${id}`);
    // One member written (beside the workspace's owner); the refused writes left no stream, no claim.
    expect(await streamsOfType('MemberCreated', wid)).toHaveLength(2);
    expect(await streamsOfType('AccountRegistered', wid)).toHaveLength(2);
    expect(await orphanClaims(wid)).toEqual([]);
    for (const r of results) {
      const me = await t.request('GET', '/me', { token: r.body.token });
      expect(me.status).toBe(200);
      expect(me.body.memberships.map((m: { member: { id: number } }) => m.member.id)).toEqual([id]);
    }
    return id;
  }

  it('fifteen concurrent signups with one externalId and different emails make one member; the other emails stay free', async () => {
    const a = await t.bootstrap('Ext race');
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        signup(a.workspaceId, a.apiKey, { externalId: 'crm-77', email: `x${i}@example.com` }),
      ),
    );
    const id = await expectOneMember(results, a.workspaceId);
    const winner = results.find((r) => r.status === 201)!;
    expect(winner.body.member.id).toBe(id);
    const member = await t.request('GET', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey });
    expect(member.body).toMatchObject({ externalId: 'crm-77', email: winner.body.member.email });
    for (const r of results) expect(r.body.member.email).toBe(winner.body.member.email);
    // The losers' emails were never taken: each signs up as a new person now.
    const losers = Array.from({ length: 15 }, (_, i) => `x${i}@example.com`).filter(
      (e) => e !== winner.body.member.email,
    );
    for (const email of losers.slice(0, 3)) {
      const fresh = await signup(a.workspaceId, a.apiKey, { email });
      expect(fresh.status).toBe(201);
      expect(fresh.body.member.id).not.toBe(id);
    }
  });

  it('fifteen concurrent signups with one phone, written in three spellings, make one member', async () => {
    const a = await t.bootstrap('Phone race');
    const spellings = ['+14155550142', '+1 (415) 555-0142', '+1 415 555 0142'];
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => signup(a.workspaceId, a.apiKey, { phone: spellings[i % 3] })),
    );
    await expectOneMember(results, a.workspaceId);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?phone=%2B14155550142`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(1);
  });

  it('email case variants and surrounding spaces are one person; a NUL, an oversized value or a bad phone is 400 and appends nothing', async () => {
    const a = await t.bootstrap('Cases');
    const variants = [
      'Case.Person@Example.com',
      'CASE.PERSON@EXAMPLE.COM',
      '  case.person@example.com  ',
      'case.person@EXAMPLE.com',
    ];
    const results = await Promise.all(variants.map((email) => signup(a.workspaceId, a.apiKey, { email })));
    const id = await expectOneMember(results, a.workspaceId);
    for (const r of results) expect(r.body.member.email).toBe('case.person@example.com');
    expect(await accountsWith('case.person@example.com')).toBe(1);

    const before = await eventCount();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ email: 'nul\u0000@example.com' }, /^member\.email: must not contain NUL/],
      [
        { email: 'case.person@example.com', externalId: 'a\u0000b' },
        /^member\.externalId: must not contain NUL/,
      ],
      [{ phone: '+1415555\u00000142' }, /^member\.phone: must not contain NUL/],
      [{ email: 'case.person@example.com', name: 'Ann\u0000' }, /^member\.name: must not contain NUL/],
      [{ email: `${'a'.repeat(250)}@example.com` }, /^member\.email/],
      [{ email: 'case.person@example.com', externalId: 'e'.repeat(256) }, /^member\.externalId/],
      [{ email: 'case.person@example.com', name: 'n'.repeat(201) }, /^member\.name/],
      [{ phone: '+1'.padEnd(5000, '5') }, /^member\.phone/],
      [{ email: ['case.person@example.com'] }, /^member\.email/],
      [{ email: { $ne: null } }, /^member\.email/],
      [{ phone: '\ud800' }, /^member\.phone/],
    ];
    for (const [member, detail] of cases) {
      const res = await signup(a.workspaceId, a.apiKey, member);
      expect({ member, status: res.status }).toEqual({ member, status: 400 });
      expect(res.body.detail).toMatch(detail);
    }
    expect(await eventCount()).toBe(before);
    // A blank externalId is no externalId (the lookup goes on to the email), as before.
    const blank = await signup(a.workspaceId, a.apiKey, {
      email: 'case.person@example.com',
      externalId: '  ',
    });
    expect(blank.status).toBe(200);
    expect(blank.body.member.id).toBe(id);
    // The careless client's valid retry still finds the one member.
    const again = await signup(a.workspaceId, a.apiKey, { email: 'CASE.person@example.COM' });
    expect(again.status).toBe(200);
    expect(again.body.member.id).toBe(id);
  });

  it('a refused write burns only a sequence number: no member, account, claim or event but the token, and ids of new members keep increasing', async () => {
    const a = await t.bootstrap('Burn');
    const first = await signup(a.workspaceId, a.apiKey, { email: 'held@example.com', phone: '+14155550143' });
    expect(first.status).toBe(201);
    const members = async () =>
      Number(
        (await db.query(`SELECT count(*)::int AS n FROM members WHERE workspace_id = $1`, [a.workspaceId]))[0]
          .n,
      );
    const accounts = Number((await db.query(`SELECT count(*)::int AS n FROM accounts`))[0].n);
    const countBefore = await members();
    // Held values in every combination the lookup meets: each finds the member and writes only a token.
    for (const member of [
      { email: 'held@example.com' },
      { phone: '+14155550143', email: 'other@example.com' },
      { email: 'held@example.com', externalId: 'new-ext' },
      { email: 'HELD@example.com', phone: '+14155550143' },
    ]) {
      const res = await signup(a.workspaceId, a.apiKey, member);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ wasCreated: false, member: { id: first.body.member.id } });
      const events = await t.eventsOf(res);
      expect(events.map((e) => e.type)).toEqual(['MemberTokenIssued']);
    }
    expect(await members()).toBe(countBefore);
    expect(Number((await db.query(`SELECT count(*)::int AS n FROM accounts`))[0].n)).toBe(accounts);
    expect(await orphanClaims(a.workspaceId)).toEqual([]);
    // The values a refused write meant to take alongside (other@, new-ext) were not taken.
    const free = await signup(a.workspaceId, a.apiKey, { email: 'other@example.com', externalId: 'new-ext' });
    expect(free.status).toBe(201);
    // The member found was not changed by the signups that found it.
    const found = await t.request('GET', `/w/${a.workspaceId}/members/${first.body.member.id}`, {
      token: a.apiKey,
    });
    expect(found.body).toMatchObject({ email: 'held@example.com', phone: '+14155550143', externalId: null });
    // Sequential signups: ids increase in request order.
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await signup(a.workspaceId, a.apiKey, { email: `seq${i}@example.com` })).body.member.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(5);
    expect(ids[0]).toBeGreaterThan(free.body.member.id);
  });

  it('forty concurrent signups of different people, some repeated, in two workspaces: unique ids, each answer its own member', async () => {
    const a = await t.bootstrap('Many A');
    const b = await t.bootstrap('Many B');
    const requests = Array.from({ length: 40 }, (_, i) => ({
      ws: i % 2 ? b : a,
      email: `many${i % 25}@example.com`,
    }));
    const results = await Promise.all(
      requests.map((r) => signup(r.ws.workspaceId, r.ws.apiKey, { email: r.email })),
    );
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const byKey = new Map<string, Set<number>>();
    results.forEach((r, i) => {
      const key = `${requests[i].ws.workspaceId}/${requests[i].email}`;
      byKey.set(key, (byKey.get(key) ?? new Set()).add(r.body.member.id));
      expect(r.body.member.email).toBe(requests[i].email);
    });
    // One member per workspace and email, never shared across workspaces.
    for (const ids of byKey.values()) expect(ids.size).toBe(1);
    const allIds = [...byKey.values()].map((s) => [...s][0]);
    expect(new Set(allIds).size).toBe(byKey.size);
    for (const [i, r] of results.entries()) {
      const ws = requests[i].ws;
      const other = ws === a ? b : a;
      const m = await t.request('GET', `/w/${ws.workspaceId}/members/${r.body.member.id}`, {
        token: ws.apiKey,
      });
      expect(m.status).toBe(200);
      expect(m.body.email).toBe(requests[i].email);
      // The other workspace sees no such member, and the token does not open it.
      expect(
        (
          await t.request('GET', `/w/${other.workspaceId}/members/${r.body.member.id}`, {
            token: other.apiKey,
          })
        ).status,
      ).toBe(404);
      expect((await t.request('GET', `/w/${other.workspaceId}`, { token: r.body.token })).status).toBe(404);
      expect(
        (
          await t.request('GET', `/w/${other.workspaceId}/members/${r.body.member.id}`, {
            token: r.body.token,
          })
        ).status,
      ).toBe(404);
    }
  });

  it('eight concurrent signups of one new person with a data part: one member, one record of each type, the values kept', async () => {
    const a = await t.bootstrap('Data race');
    const profile = await createDataType(t, a.workspaceId, a.apiKey, {
      slug: 'profile',
      isCollection: false,
      fields: [{ slug: 'dob', fieldType: 'date', required: true }],
    });
    const visits = await createDataType(t, a.workspaceId, a.apiKey, {
      slug: 'visits',
      fields: [{ slug: 'note', fieldType: 'text' }],
    });
    // Several people, eight signups each at once: a signup that looked the person up before
    // another created them (and their records) must still land on that member, not answer 409.
    for (let person = 0; person < 5; person++) {
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          t.request('POST', `/w/${a.workspaceId}/create-signup`, {
            token: a.apiKey,
            body: {
              member: { email: `data-race-${person}@example.com`, externalId: `u-race-${person}` },
              data: {
                profile: { values: { dob: '1980-05-04' } },
                visits: { externalId: `v-race-${person}`, values: { note: 'first' } },
              },
            },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(200)].sort());
      const id = results[0].body.member.id as number;
      for (const r of results) expect(r.body.member.id).toBe(id);
      for (const type of [profile, visits]) {
        const list = await t.request('GET', `${recordsPath(a.workspaceId, type.id)}?memberId=${id}`, {
          token: a.apiKey,
        });
        expect(list.body.items).toHaveLength(1);
      }
    }
  });

  it('two workspaces, one email: each its own member and account; neither signup finds nor changes the other', async () => {
    const a = await t.bootstrap('Tenant A');
    const b = await t.bootstrap('Tenant B');
    const inA = await signup(a.workspaceId, a.apiKey, {
      email: 'shared-person@example.com',
      externalId: 'crm-1',
      name: 'In A',
    });
    const [inB, inB2] = await Promise.all([
      signup(b.workspaceId, b.apiKey, {
        email: 'shared-person@example.com',
        externalId: 'crm-1',
        name: 'In B',
      }),
      signup(b.workspaceId, b.apiKey, { email: 'SHARED-person@example.com', name: 'In B' }),
    ]);
    expect(inA.status).toBe(201);
    expect([inB.status, inB2.status].sort()).toEqual([200, 201]);
    expect(inB.body.member.id).toBe(inB2.body.member.id);
    expect(inB.body.member.id).not.toBe(inA.body.member.id);
    expect(inB.body.account.uuid).not.toBe(inA.body.account.uuid);
    expect(inB.body.account).toMatchObject({ name: 'In B' });
    const aMember = await t.request('GET', `/w/${a.workspaceId}/members/${inA.body.member.id}`, {
      token: a.apiKey,
    });
    expect(aMember.body).toMatchObject({ name: 'In A', accountUuid: inA.body.account.uuid });
    const me = await t.request('GET', '/me', { token: inA.body.token });
    expect(me.body.memberships.map((m: { workspace: { id: string } }) => m.workspace.id)).toEqual([
      a.workspaceId,
    ]);
    const listB = await t.request('GET', `/w/${b.workspaceId}/members?email=shared-person@example.com`, {
      token: b.apiKey,
    });
    expect(listB.body.items.map((m: { id: number }) => m.id)).toEqual([inB.body.member.id]);
  });

  it('signups race PUT moving the email: never two members with one email, every answer names a member holding a value it asked for', async () => {
    const a = await t.bootstrap('Moves');
    for (let round = 0; round < 6; round++) {
      const from = `from${round}@example.com`;
      const to = `to${round}@example.com`;
      const m = await signup(a.workspaceId, a.apiKey, { email: from });
      expect(m.status).toBe(201);
      const [put, toSignup, fromSignup] = await Promise.all([
        t.request('PUT', `/w/${a.workspaceId}/members/${m.body.member.id}`, {
          token: a.apiKey,
          body: { email: to },
        }),
        signup(a.workspaceId, a.apiKey, { email: to }),
        signup(a.workspaceId, a.apiKey, { email: from }),
      ]);
      expect([200, 409]).toContain(put.status);
      expect([200, 201]).toContain(toSignup.status);
      expect([200, 201]).toContain(fromSignup.status);
      if (put.status === 200) {
        // The move landed: whoever signed up with `to` after it found the moved member, or won `to` first (then PUT is 409: not here).
        expect(toSignup.body.member.id).toBe(m.body.member.id);
      } else {
        expect(put.body.detail).toMatch(/^email: another member/);
        expect(toSignup.status).toBe(201);
        expect(fromSignup.body.member.id).toBe(m.body.member.id);
      }
      const list = await t.request('GET', `/w/${a.workspaceId}/members?pageSize=1000&status=active`, {
        token: a.apiKey,
      });
      const emails = list.body.items.map((x: { email: string | null }) => x.email).filter(Boolean);
      expect(new Set(emails).size).toBe(emails.length);
      for (const r of [toSignup, fromSignup]) {
        const member = list.body.items.find((x: { id: number }) => x.id === r.body.member.id);
        expect(member).toBeDefined();
        expect((await t.request('GET', '/me', { token: r.body.token })).status).toBe(200);
      }
      expect(await orphanClaims(a.workspaceId)).toEqual([]);
    }
  });

  it('Idempotency-Key: a replay answers the same signup (token included) and writes nothing; concurrent duplicates run it once', async () => {
    const a = await t.bootstrap('Replays');
    const key = `signup-${Date.now()}`;
    const first = await signup(
      a.workspaceId,
      a.apiKey,
      { email: 'idem@example.com' },
      { 'idempotency-key': key },
    );
    expect(first.status).toBe(201);
    const before = await eventCount();
    const replay = await signup(
      a.workspaceId,
      a.apiKey,
      { email: 'idem@example.com' },
      { 'idempotency-key': key },
    );
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(await eventCount()).toBe(before);
    // The same key with another body is 422 naming the header, and writes nothing.
    const other = await signup(
      a.workspaceId,
      a.apiKey,
      { email: 'idem2@example.com' },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/Idempotency-Key/i);
    expect(await eventCount()).toBe(before);
    // Another credential's same key is its own request: it finds the member, a token of its own.
    const otherKey = (
      await t.request('POST', '/me/api-keys', {
        token: a.apiKey,
        body: { name: 'second', scopes: ['members:read', 'members:write'] },
      })
    ).body.secret as string;
    const theirs = await signup(
      a.workspaceId,
      otherKey,
      { email: 'idem@example.com' },
      { 'idempotency-key': key },
    );
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.member.id).toBe(first.body.member.id);
    expect(theirs.body.token).not.toBe(first.body.token);
    // Ten at once with a new key and a new person: one execution, one member, one token.
    const key2 = `${key}-burst`;
    const burst = await Promise.all(
      Array.from({ length: 10 }, () =>
        signup(a.workspaceId, a.apiKey, { email: 'burst@example.com' }, { 'idempotency-key': key2 }),
      ),
    );
    const done = burst.filter((r) => r.status === 201);
    expect(done.length).toBeGreaterThan(0);
    for (const r of burst) expect([201, 409]).toContain(r.status);
    expect(new Set(done.map((r) => r.body.token)).size).toBe(1);
    expect(await streamsOfType('MemberTokenIssued', a.workspaceId)).toHaveLength(3);
    // The owner's, idem@'s and burst@'s.
    expect(await streamsOfType('MemberCreated', a.workspaceId)).toHaveLength(3);
  });

  it('a token issued at signup works at once, only in its workspace, and stops when revoked', async () => {
    const a = await t.bootstrap('Tokens A');
    const b = await t.bootstrap('Tokens B');
    const ann = await signup(a.workspaceId, a.apiKey, { email: 'tok@example.com' });
    const annB = await signup(b.workspaceId, b.apiKey, { email: 'tok@example.com' });
    // At once: the members projection wrote the token in the signup's own statement.
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${ann.body.member.id}`, { token: ann.body.token }))
        .status,
    ).toBe(200);
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: ann.body.token })).status).toBe(404);
    expect(
      (
        await t.request('GET', `/w/${b.workspaceId}/members/${annB.body.member.id}`, {
          token: ann.body.token,
        })
      ).status,
    ).toBe(404);
    const row = (await db.query(
      `SELECT workspace_id, member_id, revoked_at FROM member_tokens WHERE member_id = $1`,
      [ann.body.member.id],
    )) as { workspace_id: string; member_id: number }[];
    expect(row).toEqual([{ workspace_id: a.workspaceId, member_id: ann.body.member.id, revoked_at: null }]);
    // A tampered token (another's secret on this prefix) is refused.
    const [, prefixA] = /^wsm_([0-9a-f]{12})_/.exec(ann.body.token)!;
    const forged = annB.body.token.replace(/^wsm_[0-9a-f]{12}_/, `wsm_${prefixA}_`);
    expect((await t.request('GET', '/me', { token: forged })).status).toBe(401);
    expect((await t.request('DELETE', '/me/token', { token: ann.body.token })).status).toBe(204);
    expect((await t.request('GET', '/me', { token: ann.body.token })).status).toBe(401);
    expect((await t.request('GET', '/me', { token: annB.body.token })).status).toBe(200);
  });

  describe('password sign-in by the registered email', () => {
    async function signInStatus(clientId: string, email: string, password: string): Promise<number> {
      const browser = new OAuthBrowser();
      const page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          scope: 'workspace:read',
          state: 's',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      return (await browser.submit(page.form(), { email, password })).status;
    }

    it('a new account signs in right after signup and password; case variants too; an address set later with PUT /me does not', async () => {
      const owner = await ownerWithPassword(t, 'Apps');
      const app = await createApp(t, owner.apiKey);
      const email = `later-${process.pid}@example.com`;
      // A signup registers the account (no password yet); bootstrap gives that account a key.
      const s = await signup(owner.workspaceId, owner.apiKey, { email });
      expect(s.status).toBe(201);
      expect(await signInStatus(app.clientId, email, 'a password of the account 1')).toBe(401);
      const own = await t.bootstrap('Own Co', email);
      expect(own.accountUuid).toBe(s.body.account.uuid);
      const set = await t.request('PUT', '/me/password', {
        token: own.apiKey,
        body: { newPassword: 'a password of the account 1' },
      });
      expect(set.status).toBe(204);
      // At once (read-your-writes: the password's projection and the account's row).
      expect(await signInStatus(app.clientId, email, 'a password of the account 1')).toBe(303);
      expect(
        await signInStatus(app.clientId, ` ${email.toUpperCase()} `, 'a password of the account 1'),
      ).toBe(303);
      expect(await signInStatus(app.clientId, email, 'a password of the account 2')).toBe(401);
      // The account moves its own address: the new one (unproven) signs nobody in, the registered one still does.
      const moved = `moved-${process.pid}@example.com`;
      expect((await t.request('PUT', '/me', { token: own.apiKey, body: { email: moved } })).status).toBe(200);
      expect(await signInStatus(app.clientId, moved, 'a password of the account 1')).toBe(401);
      expect(await signInStatus(app.clientId, email, 'a password of the account 1')).toBe(303);
      // The operator moves the member's email: the account's registered email is unchanged.
      const put = await t.request('PUT', `/w/${owner.workspaceId}/members/${s.body.member.id}`, {
        token: owner.apiKey,
        body: { email: `member-moved-${process.pid}@example.com` },
      });
      expect(put.status).toBe(200);
      expect(
        await signInStatus(
          app.clientId,
          `member-moved-${process.pid}@example.com`,
          'a password of the account 1',
        ),
      ).toBe(401);
      // A member of another workspace with the same email is another account, without the password.
      const other = await t.bootstrap('Other Co');
      const twin = await signup(other.workspaceId, other.apiKey, { email: moved });
      expect(twin.status).toBe(201);
      expect(await signInStatus(app.clientId, moved, 'a password of the account 1')).toBe(401);
      // Hostile input in the email: never a match by pattern, never a 5xx.
      for (const hostile of [
        '%@example.com',
        `${email.slice(0, 4)}%`,
        '_' + email.slice(1),
        `${email}\u0000`,
        'x'.repeat(300),
      ])
        expect([400, 401]).toContain(
          await signInStatus(app.clientId, hostile, 'a password of the account 1'),
        );
      // Archiving the member in the operator's workspace ends its tokens, not the account's password.
      expect(
        (
          await t.request('DELETE', `/w/${owner.workspaceId}/members/${s.body.member.id}`, {
            token: owner.apiKey,
          })
        ).status,
      ).toBe(200);
      expect((await t.request('GET', '/me', { token: s.body.token })).status).toBe(401);
      expect(await signInStatus(app.clientId, email, 'a password of the account 1')).toBe(303);
    });
  });
});

/**
 * Two processes: A (ROLE=api) serves, W (ROLE=all) projects. Signups racing across both
 * make one member; a token issued through one works at once in the other, and its
 * revocation through one ends it in the other long before the auth cache's TTL.
 */
describe('Attack: signups and member tokens across two processes (e2e)', () => {
  let database: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlW: string;
  let apiKey: string;
  let workspaceId: string;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = serviceEnv(database.url, prefix, { AUTH_CACHE_TTL_MS: '60000' });
    const { all, api } = await startAllAndApi(env, ['signup-w', 'signup-a']);
    urlW = all.url;
    urlA = api.url;
    processes = [all.proc, api.proc];
    ({ apiKey, workspaceId } = await bootstrapWithCli(env, 'Two', `two-${process.pid}@example.com`));
  }, 180_000);
  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await database?.drop();
  });

  async function call(base: string, method: string, path: string, token: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
  }

  it('one email signed up through both processes at once is one member; ids unique across processes', async () => {
    await eventually(
      async () => (await call(urlA, 'GET', `/w/${workspaceId}`, apiKey)).status === 200,
      'the key',
    );
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        call(i % 2 ? urlA : urlW, 'POST', `/w/${workspaceId}/create-signup`, apiKey, {
          member: { email: i % 4 ? 'both@example.com' : 'BOTH@example.com', name: `R${i}` },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(15).fill(200)].sort());
    expect(new Set(results.map((r) => r.body.member.id)).size).toBe(1);
    const distinct = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        call(i % 2 ? urlA : urlW, 'POST', `/w/${workspaceId}/create-signup`, apiKey, {
          member: { email: `p${i}@example.com` },
        }),
      ),
    );
    expect(distinct.map((r) => r.status)).toEqual(Array(16).fill(201));
    expect(new Set(distinct.map((r) => r.body.member.id)).size).toBe(16);
  });

  it('signups and a PUT moving the email, through both processes: never two members with one email; sequential ids increase', async () => {
    const w = (path: string) => `/w/${workspaceId}${path}`;
    for (let round = 0; round < 5; round++) {
      const from = `pfrom${round}@example.com`;
      const to = `pto${round}@example.com`;
      const m = await call(urlW, 'POST', w('/create-signup'), apiKey, { member: { email: from } });
      expect(m.status).toBe(201);
      // A keeps the member in its cache, then moves it while W and A sign up both addresses.
      expect(
        (await call(urlA, 'PUT', w(`/members/${m.body.member.id}`), apiKey, { name: `R${round}` })).status,
      ).toBe(200);
      const [put, toSignup, fromSignup] = await Promise.all([
        call(urlA, 'PUT', w(`/members/${m.body.member.id}`), apiKey, { email: to }),
        call(urlW, 'POST', w('/create-signup'), apiKey, { member: { email: to } }),
        call(urlA, 'POST', w('/create-signup'), apiKey, { member: { email: from } }),
      ]);
      expect([200, 409]).toContain(put.status);
      expect([200, 201]).toContain(toSignup.status);
      expect([200, 201]).toContain(fromSignup.status);
      if (put.status === 200) expect(toSignup.body.member.id).toBe(m.body.member.id);
      else expect(fromSignup.body.member.id).toBe(m.body.member.id);
      const list = await eventually(async () => {
        const r = await call(urlA, 'GET', w('/members?pageSize=1000'), apiKey);
        return r.status === 200 ? r : undefined;
      }, 'the list');
      const emails = (list.body.items as { email: string | null }[]).map((x) => x.email).filter(Boolean);
      expect(new Set(emails).size).toBe(emails.length);
    }
    const ids: number[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        (
          await call(i % 2 ? urlA : urlW, 'POST', w('/create-signup'), apiKey, {
            member: { email: `seq${i}@example.com` },
          })
        ).body.member.id,
      );
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
  });

  it('a token issued through W works at once in A; revoked through W, A refuses it before its cache would expire', async () => {
    const s = await call(urlW, 'POST', `/w/${workspaceId}/create-signup`, apiKey, {
      member: { email: 'cross@example.com' },
    });
    expect(s.status).toBe(201);
    const token = s.body.token as string;
    expect((await call(urlA, 'GET', '/me', token)).status).toBe(200);
    expect((await call(urlA, 'GET', `/w/${workspaceId}/members/${s.body.member.id}`, token)).status).toBe(
      200,
    );
    expect((await call(urlW, 'DELETE', '/me/token', token)).status).toBe(204);
    expect((await call(urlW, 'GET', '/me', token)).status).toBe(401);
    // A cached it (TTL 60 s): the revocation's projection empties A's cache.
    await eventually(
      async () => (await call(urlA, 'GET', '/me', token)).status === 401,
      'A to refuse the token',
      15_000,
    );
    // And the member's tokens revoked all at once, through A this time.
    const again = await call(urlA, 'POST', `/w/${workspaceId}/create-signup`, apiKey, {
      member: { email: 'cross@example.com' },
    });
    expect(again.status).toBe(200);
    expect((await call(urlW, 'GET', '/me', again.body.token)).status).toBe(200);
    expect(
      (await call(urlA, 'DELETE', `/w/${workspaceId}/members/${s.body.member.id}/tokens`, apiKey)).status,
    ).toBe(204);
    await eventually(
      async () => (await call(urlW, 'GET', '/me', again.body.token)).status === 401,
      'W to refuse',
      15_000,
    );
  });
});
