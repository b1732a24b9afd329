import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, customRole, signup } from '../support/identity-fixtures';
import { addMember } from '../support/member-fixtures';

/**
 * `PUT /w/{wid}/members/{id}` answers from the member the command decided (and the version
 * the members projection gave its row), not from a read of the row: whatever it answers
 * must be exactly what a GET of the member answers right after, body and ETag, for every
 * kind of change, a no-op, If-Match, self-access, and a version moved by a role merge.
 */
describe('member PUT answers what a GET right after answers (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const path = (wid: string, id: number) => `/w/${wid}/members/${id}`;

  /** PUTs `body`, then GETs the member: both 200, same body, same ETag; the PUT's answer. */
  async function putThenGet(
    wid: string,
    token: string,
    id: number,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<TestResponse> {
    const put = await t.request('PUT', path(wid, id), { token, body, headers });
    expect({ status: put.status, body: put.body }).toMatchObject({ status: 200 });
    const get = await t.request('GET', path(wid, id), { token });
    expect(get.status).toBe(200);
    expect(put.body).toEqual(get.body);
    expect(put.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(put.headers.get('etag')).toBe(get.headers.get('etag'));
    return put;
  }

  const versionOf = (res: TestResponse) => Number(JSON.parse(res.headers.get('etag')!));

  it('each kind of change, and a no-op, answers the GET that follows; the ETag moves by one per change', async () => {
    const a = await t.bootstrap();
    const s = await signup(t, a.workspaceId, a.apiKey, { email: 'put-answer@example.com', name: 'Ada' });
    const id = s.member.id;
    const changes: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ name: 'Ada Lovelace' }, { name: 'Ada Lovelace' }],
      [{ email: 'Ada.L@Example.com' }, { email: 'ada.l@example.com' }],
      [{ phone: '+14155550123' }, { phone: '+14155550123' }],
      [{ externalId: 'crm-7' }, { externalId: 'crm-7' }],
      [
        { notifySms: true, notifyEmail: false, notifyVoice: true },
        { notifySms: true, notifyEmail: false, notifyVoice: true },
      ],
      [{ timezone: 'Europe/Paris' }, { timezone: 'Europe/Paris' }],
      [
        { name: null, externalId: null },
        { name: null, externalId: null },
      ],
    ];
    let version = versionOf(await t.request('GET', path(a.workspaceId, id), { token: a.apiKey }));
    for (const [body, shown] of changes) {
      const put = await putThenGet(a.workspaceId, a.apiKey, id, body);
      expect(put.body).toMatchObject({ id, workspaceId: a.workspaceId, ...shown });
      expect(versionOf(put)).toBe(++version);
    }

    // A role change, to a custom role and back to a built-in one.
    const dispatch = await customRole(t, a.workspaceId, a.apiKey, 'Dispatch', ['chats:read']);
    const toCustom = await putThenGet(a.workspaceId, a.apiKey, id, { memberRoleId: dispatch });
    expect(toCustom.body.memberRoleId).toBe(dispatch);
    const { User } = await builtInRoles(t, a.workspaceId, a.apiKey);
    const toUser = await putThenGet(a.workspaceId, a.apiKey, id, { memberRoleId: User });
    expect(toUser.body.memberRoleId).toBe(User);
    expect(versionOf(toUser)).toBe(version + 2);

    // A no-op appends nothing and keeps the version.
    const noop = await putThenGet(a.workspaceId, a.apiKey, id, { phone: '+14155550123', memberRoleId: User });
    expect(await t.eventsOf(noop)).toEqual([]);
    expect(versionOf(noop)).toBe(version + 2);
  });

  it('under If-Match: the current ETag applies and answers the GET; a stale one is a 412', async () => {
    const a = await t.bootstrap();
    const s = await signup(t, a.workspaceId, a.apiKey, { email: 'put-ifmatch@example.com' });
    const id = s.member.id;
    const etag = (await t.request('GET', path(a.workspaceId, id), { token: a.apiKey })).headers.get('etag')!;
    const put = await putThenGet(a.workspaceId, a.apiKey, id, { name: 'Pinned' }, { 'if-match': etag });
    expect(put.body.name).toBe('Pinned');
    expect(put.headers.get('etag')).not.toBe(etag);
    const again = await putThenGet(
      a.workspaceId,
      a.apiKey,
      id,
      { name: 'Pinned again', timezone: 'America/New_York' },
      { 'if-match': put.headers.get('etag')! },
    );
    expect(again.body).toMatchObject({ name: 'Pinned again', timezone: 'America/New_York' });
    const stale = await t.request('PUT', path(a.workspaceId, id), {
      token: a.apiKey,
      headers: { 'if-match': etag },
      body: { name: 'Lost' },
    });
    expect(stale.status).toBe(412);
    // A no-op pinned to the current version.
    await putThenGet(
      a.workspaceId,
      a.apiKey,
      id,
      { name: 'Pinned again' },
      { 'if-match': again.headers.get('etag')! },
    );
  });

  it('self-access with a member token, and an agent member: the answer is the GET', async () => {
    const a = await t.bootstrap();
    const s = await signup(t, a.workspaceId, a.apiKey, { email: 'put-self@example.com', name: 'Self' });
    const own = await putThenGet(a.workspaceId, s.token, s.member.id, {
      phone: '+14155550199',
      notifySms: true,
    });
    expect(own.body).toMatchObject({ phone: '+14155550199', notifySms: true });

    const { Agent } = await builtInRoles(t, a.workspaceId, a.apiKey);
    const agent = await addMember(t, {
      workspaceId: a.workspaceId,
      roleId: Agent,
      kind: 'agent',
      account: false,
    });
    const put = await putThenGet(a.workspaceId, a.apiKey, agent.memberId, {
      name: 'Helper',
      agentInstructions: 'Answer briefly.',
    });
    expect(put.body).toMatchObject({ kind: 'agent', name: 'Helper', agentInstructions: 'Answer briefly.' });
  });

  it('after a role merge moved the member (and its version) from the role stream, the answer is still the GET', async () => {
    const a = await t.bootstrap();
    const { User } = await builtInRoles(t, a.workspaceId, a.apiKey);
    const coordinators = await customRole(t, a.workspaceId, a.apiKey, 'Coordinators', ['chats:read']);
    const s = await signup(t, a.workspaceId, a.apiKey, { email: 'put-merge@example.com' });
    await putThenGet(a.workspaceId, a.apiKey, s.member.id, { memberRoleId: coordinators });
    const before = versionOf(await t.request('GET', path(a.workspaceId, s.member.id), { token: a.apiKey }));
    const merged = await t.request('POST', `/w/${a.workspaceId}/member-roles/${coordinators}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: User },
    });
    expect(merged.status).toBe(200);
    const afterMerge = await t.request('GET', path(a.workspaceId, s.member.id), { token: a.apiKey });
    expect(afterMerge.body.memberRoleId).toBe(User);
    expect(versionOf(afterMerge)).toBe(before + 1);
    const put = await putThenGet(a.workspaceId, a.apiKey, s.member.id, { name: 'After merge' });
    expect(put.body).toMatchObject({ name: 'After merge', memberRoleId: User });
    expect(versionOf(put)).toBe(before + 2);
  });
});
