import * as net from 'node:net';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { eventually } from '../support/processes';
import { builtInRoles, customRole, keyWithScopes, signup } from '../support/identity-fixtures';
import {
  authorizeUrl,
  createApp,
  OAuthBrowser,
  ownerWithPassword,
  pkcePair,
  REDIRECT,
} from '../support/oauth-browser';

/**
 * Attack on the request path, identity and access, fifth pass: actions that take no body
 * (core's @TakesNoBody) beyond automation's, and emails that differ only in their Unicode
 * spelling or by an invisible character. Hostile and careless clients over HTTP.
 */
describe('Attack: identity and access, fifth pass (e2e)', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const eventCount = async () => Number((await db.query(`SELECT count(*)::int AS n FROM events`))[0].n);

  /** A body past the 25 MB JSON limit, still valid JSON. */
  const oversized = () => JSON.stringify({ padding: 'x'.repeat(26 * 1024 * 1024) });

  /**
   * The answers a route that takes no body gives: a field is 400 naming it (nothing
   * appended), another media type 415, an oversized body 413; then none, an empty JSON body
   * and `{}` each reach the handler (`ok` checks each answer).
   */
  async function expectTakesNoBody(
    path: string,
    token: string,
    field: Record<string, unknown>,
    ok: (res: TestResponse) => Promise<void> | void,
  ): Promise<void> {
    const before = await eventCount();
    const named = await t.request('POST', path, { token, body: field });
    expect(named.status).toBe(400);
    expect(named.body.detail).toBe(
      `${Object.keys(field)
        .map((k) => `${k}: unknown field`)
        .join('; ')} (this operation takes no body)`,
    );
    const list = await t.request('POST', path, { token, body: [field] });
    expect(list.status).toBe(400);
    expect(list.body.detail).toMatch(/^body: this operation takes no body/);
    const form = await t.request('POST', path, {
      token,
      raw: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.detail).toMatch(/application\/json/);
    const huge = await t.request('POST', path, { token, raw: oversized() });
    expect(huge.status).toBe(413);
    expect(await eventCount()).toBe(before);
    for (const opts of [{}, { raw: '' }, { body: {} }])
      await ok(await t.request('POST', path, { token, ...opts }));
  }

  describe('actions that take no body', () => {
    it('custom toolkits enable and disable: a field is 400 naming it, an empty JSON body is none', async () => {
      const o = await t.bootstrap('No body toolkits');
      const kit = await t.request('POST', `/w/${o.workspaceId}/custom-toolkits`, {
        token: o.apiKey,
        body: { name: 'Kit', slug: 'kit' },
      });
      expect(kit.status).toBe(201);
      const base = `/w/${o.workspaceId}/custom-toolkits/${kit.body.id as number}`;
      // A client that believes it disabled the toolkit through a body field.
      await expectTakesNoBody(`${base}/enable`, o.apiKey, { enabled: false }, (res) => {
        expect(res.status).toBe(200);
        expect(res.body.enabled).toBe(true);
      });
      let first = true;
      await expectTakesNoBody(`${base}/disable`, o.apiKey, { reason: 'why' }, async (res) => {
        expect(res.status).toBe(200);
        expect(res.body.enabled).toBe(false);
        // The first one disables it; the others find it so and append nothing.
        await t.expectEvents(res, first ? [{ type: 'CustomToolkitDisabled' }] : []);
        first = false;
      });
    });

    it('accepting an invitation takes no memberRoleId: 400 naming it, the invitation still pending; decline takes an empty body', async () => {
      const o = await t.bootstrap('No body invitations');
      const roles = await builtInRoles(t, o.workspaceId, o.apiKey);
      const invitee = await t.bootstrap('Invitee home', `invitee-nobody-${process.pid}@example.com`);
      const invite = () =>
        t.request('POST', `/w/${o.workspaceId}/invitations`, {
          token: o.apiKey,
          body: { email: `invitee-nobody-${process.pid}@example.com`, memberRoleId: roles.User },
        });
      const first = await invite();
      expect(first.status).toBe(201);

      // The invitee believes it chose its own role.
      const accept = `/me/invitations/${first.body.id as string}/accept`;
      const chosen = await t.request('POST', accept, {
        token: invitee.apiKey,
        body: { memberRoleId: roles.Manager },
      });
      expect(chosen.status).toBe(400);
      expect(chosen.body).toEqual({ detail: 'memberRoleId: unknown field (this operation takes no body)' });
      await t.expectEvents(chosen, []);
      const pending = await t.request('GET', '/me/invitations', { token: invitee.apiKey });
      expect(pending.body.items.map((i: { id: string }) => i.id)).toEqual([first.body.id]);

      // An empty body with Content-Type: application/json is no body: the invitation is accepted.
      const accepted = await t.request('POST', accept, { token: invitee.apiKey, raw: '' });
      expect(accepted.status).toBe(200);
      expect(accepted.body.member.memberRoleId).toBe(roles.User);

      const second = await t.request('POST', `/w/${o.workspaceId}/invitations`, {
        token: o.apiKey,
        body: { email: `invitee-nobody-2-${process.pid}@example.com` },
      });
      expect(second.status).toBe(201);
      const other = await t.bootstrap('Invitee two home', `invitee-nobody-2-${process.pid}@example.com`);
      const decline = `/me/invitations/${second.body.id as string}/decline`;
      const why = await t.request('POST', decline, { token: other.apiKey, body: { reason: 'no thanks' } });
      expect(why.status).toBe(400);
      expect(why.body.detail).toBe('reason: unknown field (this operation takes no body)');
      await t.expectEvents(why, []);
      const declined = await t.request('POST', decline, { token: other.apiKey, raw: '' });
      expect(declined.status).toBe(204);
      await t.expectEvents(declined, [{ type: 'InvitationDeclined' }]);
    });

    it('rotating an OAuth app secret takes no clientSecret of the caller’s choosing', async () => {
      const o = await t.bootstrap('No body apps');
      const app = await createApp(t, o.apiKey);
      const rotate = `/me/apps/${app.id}/rotate-secret`;
      const secrets = new Set<string>([app.clientSecret!]);
      await expectTakesNoBody(rotate, o.apiKey, { clientSecret: 'wss_mine' }, async (res) => {
        expect(res.status).toBe(200);
        expect(res.body.clientSecret).toMatch(/^wss_/);
        expect(res.body.clientSecret).not.toBe('wss_mine');
        secrets.add(res.body.clientSecret as string);
        await t.expectEvents(res, [{ type: 'OAuthAppSecretRotated' }]);
      });
      expect(secrets.size).toBe(4);
    });

    it('MCP servers enable, disable and refresh-tools refuse a field before anything else', async () => {
      const o = await t.bootstrap('No body MCP');
      for (const action of ['enable', 'disable', 'refresh-tools']) {
        const path = `/w/${o.workspaceId}/mcp-servers/1/${action}`;
        const named = await t.request('POST', path, {
          token: o.apiKey,
          body: { mcpUrl: 'https://x.example' },
        });
        expect(named.status).toBe(400);
        expect(named.body.detail).toBe('mcpUrl: unknown field (this operation takes no body)');
        // No body, or an empty one: the server is looked up (there is none).
        for (const opts of [{}, { raw: '' }, { body: {} }]) {
          const none = await t.request('POST', path, { token: o.apiKey, ...opts });
          expect(none.status).toBe(404);
        }
      }
    });
  });

  describe('signup of an existing member', () => {
    it('a narrow key cannot take a member token of the workspace owner, nor of anyone holding more than it and the default role', async () => {
      const o = await t.bootstrap('Signup takeover', `owner-takeover-${process.pid}@example.com`);
      const w = o.workspaceId;
      const narrow = await keyWithScopes(t, o.apiKey, ['members:write']);
      const before = await eventCount();
      // The owner's address (registered by bootstrap): the answer would be the owner's own token.
      const owner = await t.request('POST', `/w/${w}/create-signup`, {
        token: narrow,
        body: { member: { email: `OWNER-takeover-${process.pid}@example.com` } },
      });
      expect(owner.status).toBe(403);
      expect(owner.body.detail).toMatch(
        /^member: this member's role grants agents:write, agents:admin, analytics:read, .* and 60 more, which this credential does not hold; a signup cannot sign in those who hold more than the caller$/,
      );
      expect(owner.body.token).toBeUndefined();
      expect(await eventCount()).toBe(before);

      // A staff member on a custom role beyond the caller's scopes and the default role's.
      const staff = await customRole(t, w, o.apiKey, 'Records staff', ['records:admin', 'members:read']);
      const held = await signup(t, w, o.apiKey, { email: 'staff@example.com', externalId: 'staff-1' });
      expect(
        (
          await t.request('PUT', `/w/${w}/members/${held.member.id}`, {
            token: o.apiKey,
            body: { memberRoleId: staff },
          })
        ).status,
      ).toBe(200);
      for (const member of [
        { email: 'staff@example.com' },
        { externalId: 'staff-1', email: 'new@example.com' },
      ]) {
        const refused = await t.request('POST', `/w/${w}/create-signup`, { token: narrow, body: { member } });
        expect(refused.status).toBe(403);
        expect(refused.body.detail).toMatch(/^member: this member's role grants records:admin, which/);
        await t.expectEvents(refused, []);
      }
      // A caller holding that role's scopes signs the staff member in.
      const wide = await keyWithScopes(t, o.apiKey, ['members:write', 'records:admin']);
      const allowed = await t.request('POST', `/w/${w}/create-signup`, {
        token: wide,
        body: { member: { email: 'staff@example.com' } },
      });
      expect(allowed.status).toBe(200);
      expect(allowed.body.member.id).toBe(held.member.id);

      // People holding the default role (User) are signed in by the narrow key as before,
      // though it holds none of User's scopes; so are new people.
      const fresh = await t.request('POST', `/w/${w}/create-signup`, {
        token: narrow,
        body: { member: { email: 'customer@example.com' } },
      });
      expect(fresh.status).toBe(201);
      const again = await t.request('POST', `/w/${w}/create-signup`, {
        token: narrow,
        body: { member: { email: 'Customer@Example.com' } },
      });
      expect(again.status).toBe(200);
      expect(again.body.member.id).toBe(fresh.body.member.id);
      expect(again.body.token).toMatch(/^wsm_/);
    });

    it('a signup cannot name a role: memberRoleId anywhere in its body is 400 naming it, and creates nobody', async () => {
      const o = await t.bootstrap('Signup roles');
      const roles = await builtInRoles(t, o.workspaceId, o.apiKey);
      const before = await eventCount();
      for (const [body, detail] of [
        [
          { member: { email: 'boss@example.com', memberRoleId: roles.Manager } },
          'member.memberRoleId: unknown field',
        ],
        [
          { member: { email: 'boss@example.com' }, memberRoleId: roles.Manager },
          'memberRoleId: unknown field',
        ],
        [
          { member: { email: 'boss@example.com', roleIds: [roles.Manager] } },
          'member.roleIds: unknown field',
        ],
      ] as const) {
        const res = await t.request('POST', `/w/${o.workspaceId}/create-signup`, { token: o.apiKey, body });
        expect(res.status).toBe(400);
        expect(res.body.detail).toBe(detail);
      }
      expect(await eventCount()).toBe(before);
    });
  });

  describe('emails spelled differently', () => {
    const nfc = 'jos\u00e9.ren\u00e9e@example.com';
    const nfd = 'jose\u0301.rene\u0301e@example.com';

    it('20 concurrent signups of one email in case, NFC/NFD and surrounding-space spellings make one member', async () => {
      const o = await t.bootstrap('Unicode emails');
      const spellings = [nfc, nfd, nfc.toUpperCase(), nfd.toUpperCase(), ` ${nfd}\u00a0`, `\t${nfc} `];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.request('POST', `/w/${o.workspaceId}/create-signup`, {
            token: o.apiKey,
            body: { member: { email: spellings[i % spellings.length] } },
          }),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 200)).toHaveLength(19);
      expect(new Set(results.map((r) => r.body.member.id as number)).size).toBe(1);
      expect(results[0].body.member.email).toBe(nfc);
      const listed = await t.request('GET', `/w/${o.workspaceId}/members?email=${encodeURIComponent(nfd)}`, {
        token: o.apiKey,
      });
      expect(listed.body.items.map((m: { id: number }) => m.id)).toEqual([results[0].body.member.id]);

      // Another member cannot take the address in its other spelling either.
      const other = await t.request('POST', `/w/${o.workspaceId}/create-signup`, {
        token: o.apiKey,
        body: { member: { email: 'someone@example.com' } },
      });
      expect(other.status).toBe(201);
      const moved = await t.request('PUT', `/w/${o.workspaceId}/members/${other.body.member.id as number}`, {
        token: o.apiKey,
        body: { email: nfd.toUpperCase() },
      });
      expect(moved.status).toBe(409);
      await t.expectEvents(moved, []);
    });

    it('the password sign-in finds an account registered with an accented address in either spelling', async () => {
      const owner = await ownerWithPassword(t, 'Accented sign-in');
      const app = await createApp(t, owner.apiKey);
      const email = `ren\u00e9e-${process.pid}@example.com`;
      // Registered through bootstrap in the decomposed spelling; kept in NFC.
      const own = await t.bootstrap('Accented Co', `rene\u0301e-${process.pid}@example.com`);
      const me = await t.request('GET', '/me', { token: own.apiKey });
      expect(me.body.email).toBe(email);
      const password = 'an accented password 1';
      expect(
        (await t.request('PUT', '/me/password', { token: own.apiKey, body: { newPassword: password } }))
          .status,
      ).toBe(204);
      const signIn = async (as: string) => {
        const browser = new OAuthBrowser();
        const page = await browser.get(
          authorizeUrl(t, {
            response_type: 'code',
            client_id: app.clientId,
            redirect_uri: REDIRECT,
            scope: 'workspace:read',
            state: 's',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          }),
        );
        return (await browser.submit(page.form(), { email: as, password })).status;
      };
      expect(await signIn(email)).toBe(303);
      expect(await signIn(`RENE\u0301E-${process.pid}@EXAMPLE.COM`)).toBe(303);
    });

    it('an email holding an invisible character is 400 naming the field and appends nothing', async () => {
      const o = await t.bootstrap('Invisible emails');
      const before = await eventCount();
      for (const email of [
        'ann@example.com\u200b',
        '\u200bann@example.com',
        'an\u200dn@example.com',
        'ann@exa\u200emple.com',
        'ann\u2066@example.com',
        'ann@example.com\u0007',
      ]) {
        const signup = await t.request('POST', `/w/${o.workspaceId}/create-signup`, {
          token: o.apiKey,
          body: { member: { email } },
        });
        expect(signup.status).toBe(400);
        expect(signup.body).toEqual({ detail: 'member.email: must be an email address' });
        const invited = await t.request('POST', `/w/${o.workspaceId}/invitations`, {
          token: o.apiKey,
          body: { email },
        });
        expect(invited.status).toBe(400);
        expect(invited.body).toEqual({ detail: 'email: must be an email address' });
      }
      const me = await t.request('PUT', `/w/${o.workspaceId}/members/${o.memberId}`, {
        token: o.apiKey,
        body: { email: 'own\ufeffer@example.com' },
      });
      expect(me.status).toBe(400);
      expect(me.body).toEqual({ detail: 'email: must be an email address' });
      expect(await eventCount()).toBe(before);
    });
  });
});

/**
 * The rate limit of a credential counts requests with a body before the body is read
 * (core/http/early-auth.ts): before, a body that failed to parse or that the input guard
 * refused was answered before the guard's admission, so it carried no X-RateLimit-* headers
 * and counted nowhere, and an upload in progress held no in-flight slot (a key could have
 * any number of 25 MB bodies in flight).
 */
describe('Attack: rate limits of requests with a body (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '12', RATE_LIMIT_CONCURRENCY: '2' } });
  });
  afterAll(() => t.close());

  /** A POST whose headers and first bytes are sent, the rest never: an upload in progress. */
  function holdUpload(path: string, token: string): Promise<net.Socket> {
    const url = new URL(t.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.write(
          `POST /api/v2${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name": "',
          () => setTimeout(() => resolve(socket), 200),
        );
      });
      socket.on('error', reject);
    });
  }

  it('parse failures and refused bodies count and carry X-RateLimit-*, uploads in progress hold slots, and past the limit a body is not read', async () => {
    const o = await t.bootstrap('Limited bodies');
    const roles = `/w/${o.workspaceId}/member-roles`;
    const answers = [
      await t.request('POST', roles, { token: o.apiKey, raw: '{"name": ' }),
      await t.request('POST', roles, {
        token: o.apiKey,
        raw: 'name=x',
        headers: { 'content-type': 'text/plain' },
      }),
      await t.request('POST', roles, {
        token: o.apiKey,
        raw: JSON.stringify({ x: 'y'.repeat(26 * 1024 * 1024) }),
      }),
      await t.request('POST', roles, { token: o.apiKey, body: { name: 'a\u0000b', permissions: [] } }),
      await t.request('POST', `/me/invitations/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/accept`, {
        token: o.apiKey,
        body: { memberRoleId: 1 },
      }),
    ];
    expect(answers.map((r) => r.status)).toEqual([400, 415, 413, 400, 400]);
    expect(answers.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(Array(5).fill('12'));
    expect(answers.map((r) => Number(r.headers.get('x-ratelimit-remaining')))).toEqual([11, 10, 9, 8, 7]);

    // Two uploads in progress take both in-flight slots: a third request waits its turn.
    const held = [await holdUpload(roles, o.apiKey), await holdUpload(roles, o.apiKey)];
    const third = await t.request('GET', `/w/${o.workspaceId}`, { token: o.apiKey });
    expect(third.status).toBe(429);
    expect(third.body.detail).toMatch(/^Too many concurrent requests: at most 2 in flight per credential/);
    held.forEach((s) => s.destroy());
    await eventually(
      async () => (await t.request('GET', `/w/${o.workspaceId}`, { token: o.apiKey })).status === 200,
      'the slots of the abandoned uploads to free',
      5000,
      50,
    );

    // Past the limit, a body is refused before it is read: 429, not the 400 its JSON deserves.
    let last: TestResponse | undefined;
    for (let i = 0; i < 12; i++) {
      last = await t.request('POST', roles, { token: o.apiKey, raw: '{"name": ' });
      if (last.status === 429) break;
      expect(last.status).toBe(400);
    }
    expect(last!.status).toBe(429);
    expect(last!.body.detail).toMatch(/^Rate limit exceeded: at most 12 requests per minute per credential/);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
  });
  it('a body sent to a public route counts against the client address before it is read; providers’ webhooks stay exempt', async () => {
    const register = () => t.request('POST', '/oauth/register', { raw: '{"client_name": ' });
    const first = [await register(), await register()];
    expect(first.map((r) => r.status)).toEqual([400, 400]);
    expect(first.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(['12', '12']);
    const [a, b] = first.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(b).toBe(a - 1);

    // Twilio's webhooks (@SkipRateLimit on their controller) are not counted, body or not.
    for (let i = 0; i < 3; i++) {
      const status = await t.request('POST', '/providers/twilio/sms/status', {
        raw: 'MessageSid=SM1&MessageStatus=delivered',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(status.status).toBe(403);
      expect(status.headers.get('x-ratelimit-limit')).toBeNull();
    }

    let last: TestResponse | undefined;
    for (let i = 0; i < 12; i++) {
      last = await register();
      if (last.status === 429) break;
      expect(last.status).toBe(400);
    }
    expect(last!.status).toBe(429);
    expect(last!.body.detail).toMatch(/per client address/);
  });
});
