import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole, importMembers, keyWithScopes, signup } from '../support/identity-fixtures';

describe('member import (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('imports contacts with per-row results and errors, like the bulk records response', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const existing = await signup(t, a.workspaceId, a.apiKey, { email: 'taken@example.com' });
    const res = await importMembers(t, a.workspaceId, a.apiKey, [
      { email: 'One@Example.com', name: 'One', externalId: 'c-1', notifySms: true },
      { phone: '+1 415 555 0177', externalId: 'c-2' },
      { email: 'not-an-email' },
      { email: 'taken@example.com' },
      { email: 'one@example.com' },
      { email: 'x@example.com', colour: 'red' },
      'not an object',
      { name: 'Three' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      totalCount: 8,
      importedCount: 3,
      results: [
        { index: 0, status: 'created', memberId: expect.any(Number), externalId: 'c-1' },
        { index: 1, status: 'created', memberId: expect.any(Number), externalId: 'c-2' },
        { index: 7, status: 'created', memberId: expect.any(Number), externalId: null },
      ],
      errors: [
        { index: 2, detail: 'email: must be an email address' },
        {
          index: 3,
          detail: `email: a member with this email already exists (member ${existing.member.id}); send upsert: true to update it`,
        },
        { index: 4, detail: 'email: duplicates row 0 of this request' },
        { index: 5, detail: 'colour: unknown field' },
        { index: 6, detail: 'row: must be an object' },
      ],
    });
    const one = await t.request('GET', `/w/${a.workspaceId}/members/${res.body.results[0].memberId}`, {
      token: a.apiKey,
    });
    expect(one.body).toMatchObject({
      email: 'one@example.com',
      name: 'One',
      notifySms: true,
      accountUuid: null,
      memberRoleId: roles.User,
      kind: 'person',
    });
    const created = (await t.eventsOf(res)).filter((e) => e.type === 'MemberCreated');
    expect(created.map((e) => (e.data as { memberId: number }).memberId).sort()).toEqual(
      res.body.results.map((r: { memberId: number }) => r.memberId).sort(),
    );
    expect(created[0].data).toMatchObject({ workspaceId: a.workspaceId, accountUuid: null });
  });

  it('answers success with errors null when every row imports', async () => {
    const a = await t.bootstrap();
    const res = await importMembers(t, a.workspaceId, a.apiKey, [
      { email: 'a@example.com' },
      { email: 'b@example.com' },
    ]);
    expect(res.body).toMatchObject({ success: true, totalCount: 2, importedCount: 2, errors: null });
  });

  it('upserts rows matched by externalId, then email, then phone', async () => {
    const a = await t.bootstrap();
    const first = await importMembers(t, a.workspaceId, a.apiKey, [
      { email: 'u@example.com', externalId: 'u-1', name: 'U' },
    ]);
    const id = first.body.results[0].memberId;
    const res = await importMembers(
      t,
      a.workspaceId,
      a.apiKey,
      [
        { externalId: 'u-1', name: 'U two', notifyVoice: true },
        { email: 'u@example.com' },
        { email: 'new@example.com' },
      ],
      true,
    );
    expect(res.body.results).toEqual([
      { index: 0, status: 'updated', memberId: id, externalId: 'u-1' },
      { index: 1, status: 'unchanged', memberId: id, externalId: 'u-1' },
      { index: 2, status: 'created', memberId: expect.any(Number), externalId: null },
    ]);
    // Two rows for one member in one request would race: the later one could only fail.
    expect(res.body.errors).toBeNull();
    const events = await t.eventsOf(res);
    expect(events.map((e) => e.type).sort()).toEqual(['MemberCreated', 'MemberUpdated']);
    expect(events.find((e) => e.type === 'MemberUpdated')!.data).toMatchObject({
      memberId: id,
      changes: { name: 'U two', notifyVoice: true },
    });
    expect(events.find((e) => e.type === 'MemberCreated')!.data).toMatchObject({ email: 'new@example.com' });
    // A contact without an account gets one when it signs up.
    const s = await signup(t, a.workspaceId, a.apiKey, { email: 'u@example.com' });
    expect(s).toMatchObject({
      wasCreated: false,
      member: { id },
      account: { email: 'u@example.com', name: 'U two' },
    });
    const member = await t.request('GET', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey });
    expect(member.body.accountUuid).toBe(s.account.uuid);
    expect((await t.request('GET', '/me', { token: s.token })).status).toBe(200);
  });

  it('applies rows that meet one member in request order, each reporting what it changed', async () => {
    const a = await t.bootstrap();
    const first = await importMembers(t, a.workspaceId, a.apiKey, [
      { email: 'o@example.com', externalId: 'o-1', phone: '+14155550123', name: 'O' },
    ]);
    const id = first.body.results[0].memberId;
    const res = await importMembers(
      t,
      a.workspaceId,
      a.apiKey,
      [
        { externalId: 'o-1', name: 'First' },
        { email: 'o@example.com', name: 'Second' },
        { phone: '+1 415 555 0123', name: 'Second' },
      ],
      true,
    );
    // Row 2 only finds nothing to change once row 1 has run: the rows did not race.
    expect(res.body.results).toEqual([
      { index: 0, status: 'updated', memberId: id, externalId: 'o-1' },
      { index: 1, status: 'updated', memberId: id, externalId: 'o-1' },
      { index: 2, status: 'unchanged', memberId: id, externalId: 'o-1' },
    ]);
    const updates = (await t.eventsOf(res)).filter((e) => e.type === 'MemberUpdated');
    expect(updates.map((e) => (e.data as { changes: { name?: string } }).changes.name)).toEqual([
      'First',
      'Second',
    ]);
    const member = await t.request('GET', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey });
    expect(member.body.name).toBe('Second');
  });

  it('takes up to 10,000 rows; more is 400', async () => {
    const a = await t.bootstrap();
    const tooMany = await importMembers(
      t,
      a.workspaceId,
      a.apiKey,
      Array.from({ length: 10_001 }, () => ({})),
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toMatch(/^members: must contain no more than 10000 elements/);
    const none = await importMembers(t, a.workspaceId, a.apiKey, []);
    expect(none.status).toBe(400);
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      email: `bulk${i}@example.com`,
      externalId: `b-${i}`,
    }));
    const res = await importMembers(t, a.workspaceId, a.apiKey, rows);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      totalCount: 10_000,
      importedCount: 10_000,
      errors: null,
    });
    expect(res.body.results[9_999]).toMatchObject({ index: 9_999, status: 'created', externalId: 'b-9999' });
    const list = await t.request('GET', `/w/${a.workspaceId}/members?pageSize=1`, { token: a.apiKey });
    expect(list.body.total).toBe(10_001);
    const last = await t.request('GET', `/w/${a.workspaceId}/members?externalId=b-9999`, { token: a.apiKey });
    expect(last.body.items).toEqual([expect.objectContaining({ email: 'bulk9999@example.com' })]);
    // Speed is measured by `npm run bench -- member-import`, not here.
  }, 180_000);

  it('writes new contacts in batches; a row meeting an existing member fails alone, or upserts', async () => {
    const a = await t.bootstrap();
    const byEmail = await signup(t, a.workspaceId, a.apiKey, { email: 'old-e@example.com' });
    const byExternalId = await signup(t, a.workspaceId, a.apiKey, {
      externalId: 'old-x',
      email: 'old-x@example.com',
    });
    const byPhone = await signup(t, a.workspaceId, a.apiKey, { phone: '+14155550100' });
    const rows: Record<string, unknown>[] = Array.from({ length: 40 }, (_, i) => ({
      email: `batch${i}@example.com`,
      externalId: `bx-${i}`,
    }));
    rows[5] = { email: 'old-e@example.com', name: 'Five' };
    rows[17] = { externalId: 'old-x', name: 'Seventeen' };
    rows[33] = { phone: '+1 415 555 0100', email: 'p33@example.com' };

    const res = await importMembers(t, a.workspaceId, a.apiKey, rows);
    expect(res.status).toBe(200);
    const taken = (field: string, holder: number) =>
      `${field}: a member with this ${field} already exists (member ${holder}); send upsert: true to update it`;
    expect(res.body.errors).toEqual([
      { index: 5, detail: taken('email', byEmail.member.id) },
      { index: 17, detail: taken('externalId', byExternalId.member.id) },
      { index: 33, detail: taken('phone', byPhone.member.id) },
    ]);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual(
      Array.from({ length: 40 }, (_, i) => i).filter((i) => ![5, 17, 33].includes(i)),
    );
    const events = await t.eventsOf(res);
    const created = events.filter((e) => e.type === 'MemberCreated');
    expect(created.map((e) => (e.data as { memberId: number }).memberId).sort()).toEqual(
      res.body.results.map((r: { memberId: number }) => r.memberId).sort(),
    );
    // Each created contact holds its two values; a failed row left no claim behind.
    // New contacts between the existing ones were written together, in one transaction.
    const perCommit = new Map<bigint, number>();
    for (const e of created) perCommit.set(e.position.commit, (perCommit.get(e.position.commit) ?? 0) + 1);
    expect(Math.max(...perCommit.values())).toBeGreaterThanOrEqual(10);
    // (Row 33 went one by one: it took p33's email, met the phone, and gave the email back.)
    // The claims are rows of `claims`, written with the members (no claim events on PostgreSQL).
    const db = t.app.get(DataSource);
    const [held] = await db.query(
      `SELECT count(*)::int AS n FROM claims WHERE scope = $1 AND owner = ANY($2)`,
      [a.workspaceId, created.map((e) => `member-${(e.data as { memberId: number }).memberId}`)],
    );
    expect(held.n).toBe(2 * 37);
    const [orphans] = await db.query(
      `SELECT count(*)::int AS n FROM claims c WHERE scope = $1
         AND NOT EXISTS (SELECT 1 FROM members m WHERE 'member-' || m.id = c.owner)`,
      [a.workspaceId],
    );
    expect(orphans.n).toBe(0);
    const p33 = await t.request('GET', `/w/${a.workspaceId}/members?email=p33@example.com`, {
      token: a.apiKey,
    });
    expect(p33.body.items).toEqual([]);

    // The same rows again with upsert: nothing new, the three existing members updated.
    const again = await importMembers(t, a.workspaceId, a.apiKey, rows, true);
    expect(again.body.errors).toBeNull();
    const status = new Map(
      again.body.results.map((r: { index: number; status: string }) => [r.index, r.status]),
    );
    expect(status.get(5)).toBe('updated');
    expect(status.get(17)).toBe('updated');
    expect(status.get(33)).toBe('updated');
    expect([...status.values()].filter((v) => v === 'unchanged')).toHaveLength(37);
    expect((await t.eventsOf(again)).filter((e) => e.type === 'MemberCreated')).toEqual([]);
    const phoneHolder = await t.request('GET', `/w/${a.workspaceId}/members/${byPhone.member.id}`, {
      token: a.apiKey,
    });
    expect(phoneHolder.body).toMatchObject({ phone: '+14155550100', email: 'p33@example.com' });
  });

  it('applies the Agent rules per row: the row fails, the others import', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const custom = await customRole(t, a.workspaceId, a.apiKey, 'Bots', ['chats:read']);
    const res = await importMembers(t, a.workspaceId, a.apiKey, [
      { name: 'Bot A', kind: 'agent' },
      { name: 'Bot B', kind: 'agent', memberRoleId: roles.Manager },
      { name: 'Person A', memberRoleId: roles.Agent },
      { name: 'Bot C', kind: 'agent', memberRoleId: custom },
      { name: 'Person B', memberRoleId: roles['Platform Support'] },
      { name: 'Person C', memberRoleId: 999_999 },
      { name: 'Bot D', kind: 'robot' },
    ]);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([0, 3]);
    expect(res.body.errors).toEqual([
      {
        index: 1,
        detail: expect.stringMatching(
          /^memberRoleId: an agent member cannot hold the built-in Manager role \(agent to human role\)/,
        ),
      },
      {
        index: 2,
        detail: expect.stringMatching(
          /^memberRoleId: a person cannot hold the Agent role \(human to Agent role\)/,
        ),
      },
      { index: 4, detail: 'memberRoleId: the Platform Support role is assigned by support staff only' },
      { index: 5, detail: 'memberRoleId: role 999999 does not exist in this workspace' },
      { index: 6, detail: 'kind: must be one of person, agent' },
    ]);
    const botA = await t.request('GET', `/w/${a.workspaceId}/members/${res.body.results[0].memberId}`, {
      token: a.apiKey,
    });
    expect(botA.body).toMatchObject({ kind: 'agent', memberRoleId: roles.Agent });
  });

  it('needs members:write, and rows cannot hand out roles beyond the caller’s scopes', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const reader = await keyWithScopes(t, a.apiKey, ['members:read']);
    expect((await importMembers(t, a.workspaceId, reader, [{}])).status).toBe(403);
    const writer = await keyWithScopes(t, a.apiKey, ['members:write']);
    const res = await importMembers(t, a.workspaceId, writer, [
      { name: 'M', memberRoleId: roles.Manager },
      { name: 'N' },
    ]);
    expect(res.body.errors).toEqual([
      { index: 0, detail: expect.stringMatching(/^memberRoleId: the role grants/) },
    ]);
    expect(res.body.importedCount).toBe(1);
  });
});
