import { DataSource } from 'typeorm';
import { nextId } from '../../src/core/database/ids';
import { WrongExpectedRevisionError } from '../../src/core/event-store/event-store.port';
import { CLAIM_GRACE_MS } from '../../src/modules/identity/commands/claims.service';
import { claimKey } from '../../src/modules/identity/domain/claim';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { appendAndSettle } from '../support/member-fixtures';

/** Uniqueness claims left behind by crashes: never a blocked value, never two holders. */
describe('member uniqueness claims after crashes (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const claim = (
    wid: string,
    field: 'email' | 'phone' | 'externalId',
    value: string,
    memberId: number,
    claimedAt: Date,
  ) =>
    appendAndSettle(t, wid, [
      [
        claimKey(wid, field, value).stream,
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
    expect(events.slice(0, 3).map((e) => [e.type, e.streamName])).toEqual([
      ['MemberWriteFenced', `member-${ghost}`],
      ['MemberValueClaimed', claimKey(a.workspaceId, 'email', 'ghost@example.com').stream],
      ['MemberCreated', `member-${res.body.member.id}`],
    ]);
    expect(events[0].data).toMatchObject({ memberId: ghost, reason: 'orphan_claim' });
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
    expect(Date.now()).toBeGreaterThanOrEqual(claimedAt.getTime() + CLAIM_GRACE_MS);
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
      type: 'MemberWriteFenced',
      streamName: `member-${ann.member.id}`,
      data: { reason: 'stale_claim' },
    });
    // Ann is unaffected and keeps her new address.
    const annNow = await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
    });
    expect(annNow.body).toMatchObject({ email: 'ann2@example.com', status: 'active' });
    const again = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { name: 'Ann' },
    });
    expect(again.status).toBe(200);
  });

  it('a released claim whose member still carries the value stays live', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'keep@example.com' });
    const key = claimKey(a.workspaceId, 'email', 'keep@example.com');
    await appendAndSettle(t, a.workspaceId, [
      [
        key.stream,
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
