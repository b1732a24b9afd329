import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DEFAULT_CLAIM_GRACE_MS } from '../../src/core/claims/stream-claims';
import { nextId } from '../../src/core/database/ids';
import { WrongExpectedRevisionError } from '../../src/core/event-store/event-store.port';
import { MemberClaims1764000006400 } from '../../src/modules/identity/member-claims.migration';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { appendAndSettle } from '../support/member-fixtures';

/**
 * The stream identity wrote a member value's claim to before core claims, which the
 * member claim kinds keep using on EventStoreDB: claims taken before the move stay binding.
 */
const legacyStream = (wid: string, field: 'email' | 'phone', value: string) =>
  `claim-member-${field}-${wid}-${createHash('sha256').update(value).digest('hex')}`;

/** Uniqueness claims left behind by crashes (EventStoreDB): never a blocked value, never two holders. */
describe('member uniqueness claims after crashes, on EventStoreDB (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ eventStoreDb: true });
  });
  afterAll(() => t.close());

  /** A claim as the old mechanism wrote it, left by a writer that then crashed. */
  const claim = (wid: string, field: 'email' | 'phone', value: string, memberId: number, claimedAt: Date) =>
    appendAndSettle(t, wid, [
      [
        legacyStream(wid, field, value),
        [
          {
            type: 'MemberValueClaimed',
            data: { workspaceId: wid, field, memberId, claimedAt: claimedAt.toISOString() },
          },
        ],
      ],
    ]);

  it('an orphan claim (claimed, member never appended) is fenced and taken over', async () => {
    const a = await t.bootstrap();
    const ghost = await nextId(t.app.get(DataSource), 'member_id_seq');
    await claim(a.workspaceId, 'email', 'ghost@example.com', ghost, new Date(Date.now() - 60_000));
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ghost@example.com' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.wasCreated).toBe(true);
    expect(res.body.member.id).not.toBe(ghost);
    const events = await t.eventsOf(res);
    // The claim stays in its old stream and format: auditors read the same events as before.
    expect(events.slice(0, 3).map((e) => [e.type, e.streamName])).toEqual([
      ['ClaimFenced', `member-${ghost}`],
      ['MemberValueClaimed', legacyStream(a.workspaceId, 'email', 'ghost@example.com')],
      ['MemberCreated', `member-${res.body.member.id}`],
    ]);
    expect(events[0].data).toMatchObject({ kind: 'member_email', by: `member-${res.body.member.id}` });
    expect(events[1].data).toMatchObject({ field: 'email', memberId: res.body.member.id });
    // The crashed writer can never land its member now.
    const metadata = { ...events[0].metadata };
    const late = await t.store
      .append(`member-${ghost}`, [{ type: 'MemberCreated', data: { memberId: ghost }, metadata }], {
        expectedRevision: 'no_stream',
      })
      .catch((e: Error) => e);
    expect(late).toBeInstanceOf(WrongExpectedRevisionError);
  });

  it('a young orphan claim is waited for (a write in flight), then taken over', async () => {
    const a = await t.bootstrap();
    const ghost = await nextId(t.app.get(DataSource), 'member_id_seq');
    const claimedAt = new Date(Date.now() - 2_000);
    await claim(a.workspaceId, 'phone', '+14155550100', ghost, claimedAt);
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { phone: '+14155550100' } },
    });
    expect(res.status).toBe(201);
    // Waited out the rest of the grace, counted from the claim (however long the fixture took).
    expect(Date.now()).toBeGreaterThanOrEqual(claimedAt.getTime() + DEFAULT_CLAIM_GRACE_MS);
  });

  it('a stale claim (its member moved to another value without releasing) is fenced and taken over', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const put = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { email: 'ann2@example.com' },
    });
    expect(put.status).toBe(200);
    // As if the release after the update had crashed: the old value is claimed for Ann again.
    await claim(a.workspaceId, 'email', 'ann@example.com', ann.member.id, new Date(Date.now() - 60_000));
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann@example.com' } },
    });
    expect(res.body.wasCreated).toBe(true);
    const events = await t.eventsOf(res);
    expect(events[0]).toMatchObject({
      type: 'ClaimFenced',
      streamName: `member-${ann.member.id}`,
      data: { kind: 'member_email' },
    });
    // Ann is unaffected and keeps her new address.
    const annNow = await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
    });
    expect(annNow.body).toMatchObject({ email: 'ann2@example.com', status: 'active' });
    // The fence moved her stream on, and the read model with it: her current ETag still applies.
    const etag = annNow.headers.get('etag')!;
    const again = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { name: 'Ann' },
      headers: { 'if-match': etag },
    });
    expect(again.status).toBe(200);
  });

  it('a released claim whose member still carries the value stays live', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'keep@example.com' });
    await appendAndSettle(t, a.workspaceId, [
      [
        legacyStream(a.workspaceId, 'email', 'keep@example.com'),
        [
          {
            type: 'MemberValueReleased',
            data: {
              workspaceId: a.workspaceId,
              field: 'email',
              memberId: ann.member.id,
              releasedAt: new Date().toISOString(),
            },
          },
        ],
      ],
    ]);
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'keep@example.com' } },
    });
    expect(res.body).toMatchObject({ wasCreated: false, member: { id: ann.member.id } });
  });
});

/** On PostgreSQL a member value's claim is a row of `claims`, written in the member's transaction. */
describe('member uniqueness claims on PostgreSQL (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const claimRows = (wid: string) =>
    t.app
      .get(DataSource)
      .query(`SELECT kind, owner FROM claims WHERE scope = $1 AND kind LIKE 'member_%' ORDER BY kind`, [wid]);

  it('a signup takes its values as rows, with no claim event; the migration claims existing members once', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com', phone: '+14155550111' });
    expect(await claimRows(a.workspaceId)).toEqual([
      { kind: 'member_email', owner: `member-${a.memberId}` },
      { kind: 'member_email', owner: `member-${ann.member.id}` },
      { kind: 'member_phone', owner: `member-${ann.member.id}` },
    ]);
    // Members from before the move had no rows: the migration gives them theirs, idempotently.
    const db = t.app.get(DataSource);
    await db.query(`DELETE FROM claims WHERE scope = $1`, [a.workspaceId]);
    const migration = new MemberClaims1764000006400();
    const runner = db.createQueryRunner();
    try {
      await migration.up(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect(await claimRows(a.workspaceId)).toHaveLength(3);
    const again = await signup(t, a.workspaceId, a.apiKey, { phone: '+1 415 555 0111' });
    expect(again).toMatchObject({ wasCreated: false, member: { id: ann.member.id } });
  });

  it('an archived member gives its values up in the same write', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'gone@example.com' });
    const del = await t.request('DELETE', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
    });
    expect(del.status).toBeLessThan(300);
    expect((await t.eventsOf(del)).map((e) => e.type)).toEqual(['MemberArchived']);
    expect(await claimRows(a.workspaceId)).toEqual([{ kind: 'member_email', owner: `member-${a.memberId}` }]);
    const next = await signup(t, a.workspaceId, a.apiKey, { email: 'gone@example.com' });
    expect(next.wasCreated).toBe(true);
  });
});
