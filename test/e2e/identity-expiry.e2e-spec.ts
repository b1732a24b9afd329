import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import { jobIdFor } from '../../src/core/reactors/reactor';
import { ExpireWhenLapsedReactor } from '../../src/modules/identity/reactors/expire-when-lapsed.reactor';
import { EXPIRY_QUEUE } from '../../src/modules/identity/workers/expiry.processor';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { eventually } from '../support/processes';

/** Lifetimes of a few seconds, in the configured unit (days). */
const TTL_SECONDS = 3;
const ttlDays = (TTL_SECONDS / 86_400).toFixed(12);
const REACTOR = 'identity-expiry';

/**
 * The first production reactor and worker: every invitation and member token gets a job
 * delayed until its expiry, and the worker records the lapse as an event through the
 * decider; the read models then show it.
 */
describe('invitations and member tokens lapse (e2e)', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp({ env: { INVITATION_TTL_DAYS: ttlDays, MEMBER_TOKEN_TTL_DAYS: ttlDays } });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const queue = () => t.app.get<Queue>(getQueueToken(EXPIRY_QUEUE), { strict: false });

  /** Waits for the request's events to include `type`, then returns them all. */
  async function eventsOnceThere(res: TestResponse, type: string): Promise<StoredEvent[]> {
    return eventually(
      async () => {
        const events = await t.eventsOf(res);
        return events.some((e) => e.type === type) ? events : undefined;
      },
      `${type} to be appended`,
      30_000,
    );
  }

  async function allEvents(): Promise<StoredEvent[]> {
    const all: StoredEvent[] = [];
    for (let after: StoredEvent['position'] | undefined; ;) {
      const batch = await t.store.readAll({ after, maxCount: 1000 });
      if (!batch.length) return all;
      all.push(...batch);
      after = batch[batch.length - 1].position;
    }
  }

  it('an invitation left pending becomes InvitationExpired, status expired in the read model, and can no longer be accepted', async () => {
    const a = await t.bootstrap('Alpha');
    const b = await t.bootstrap('Beta', 'late@example.com');
    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'late@example.com' },
    });
    expect(inv.status).toBe(201);

    const events = await eventsOnceThere(inv, 'InvitationExpired');
    await t.expectEvents(inv, [
      { type: 'InvitationCreated', stream: `invitation-${inv.body.id}` },
      {
        type: 'InvitationExpired',
        stream: `invitation-${inv.body.id}`,
        data: { invitationId: inv.body.id, workspaceId: a.workspaceId },
      },
    ]);
    const [created, expired] = events;
    const lifetime = created.data as { createdAt: string; expiresAt: string };
    expect(Date.parse(lifetime.expiresAt) - Date.parse(lifetime.createdAt)).toBe(TTL_SECONDS * 1000);
    // Recorded by the worker, for the auditor: caused by the creation, never before the expiry.
    expect(expired.metadata).toMatchObject({ actor: { kind: 'system' }, causationId: created.id });
    const expiredAt = (expired.data as { expiredAt: string }).expiredAt;
    expect(Date.parse(expiredAt)).toBeGreaterThanOrEqual(Date.parse(lifetime.expiresAt));

    // The read model holds the recorded status, not only one derived from the clock.
    const rows = await eventually(async () => {
      const r = (await db.query(`SELECT status, expired_at FROM invitations WHERE id = $1`, [
        inv.body.id,
      ])) as {
        status: string;
        expired_at: Date | null;
      }[];
      return r[0]?.status === 'expired' ? r : undefined;
    }, 'the invitations projection to show the lapse');
    expect(rows[0].expired_at?.toISOString()).toBe(expiredAt);
    const read = await t.request('GET', `/w/${a.workspaceId}/invitations/${inv.body.id}`, {
      token: a.apiKey,
    });
    expect(read.body).toMatchObject({ status: 'expired', acceptedAt: null, revokedAt: null });
    const listed = await t.request('GET', `/w/${a.workspaceId}/invitations?status=expired`, {
      token: a.apiKey,
    });
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([inv.body.id]);
    expect((await t.request('GET', '/me/invitations', { token: b.apiKey })).body.items).toEqual([]);

    const accept = await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: b.apiKey });
    expect(accept.status).toBe(409);
    expect(accept.body.detail).toMatch(/expired/);
    await t.expectEvents(accept, []);
    // Nothing left to revoke: answered with the invitation as it is, and nothing appended.
    const revoke = await t.request('DELETE', `/w/${a.workspaceId}/invitations/${inv.body.id}`, {
      token: a.apiKey,
    });
    expect(revoke.status).toBe(200);
    expect(revoke.body.status).toBe('expired');
    await t.expectEvents(revoke, []);
  });

  it('a member token becomes MemberTokenExpired, marked in the read model, and is refused', async () => {
    const a = await t.bootstrap('Gamma');
    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'brief@example.com' } },
    });
    expect(signup.status).toBe(201);
    const events = await eventsOnceThere(signup, 'MemberTokenExpired');
    const issued = events.find((e) => e.type === 'MemberTokenIssued')!;
    const tokenId = (issued.data as { tokenId: string }).tokenId;
    const expired = events.filter((e) => e.type === 'MemberTokenExpired');
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({
      streamName: `membertoken-${tokenId}`,
      data: { tokenId, workspaceId: a.workspaceId, memberId: signup.body.member.id },
      metadata: { actor: { kind: 'system' }, causationId: issued.id },
    });

    await eventually(async () => {
      const r = (await db.query(`SELECT expired_at FROM member_tokens WHERE id = $1`, [tokenId])) as {
        expired_at: Date | null;
      }[];
      return r[0]?.expired_at;
    }, 'the members projection to show the lapse');
    const me = await t.request('GET', '/me', { token: signup.body.token });
    expect(me.status).toBe(401);
  });

  it('replaying the reactor from its first event enqueues nothing new and records no lapse twice', async () => {
    const handled = async () =>
      Number(
        (
          (await db.query(`SELECT events_handled AS n FROM subscriber_checkpoints WHERE name = $1`, [
            REACTOR,
          ])) as { n: string }[]
        )[0]?.n ?? 0,
      );
    const sources = async () =>
      (await allEvents()).filter((e) => e.type === 'InvitationCreated' || e.type === 'MemberTokenIssued');
    // Everything so far has been scheduled and has run.
    const before = await sources();
    await eventually(
      async () => (await queue().getJobCounts('completed')).completed === before.length,
      'every expiry job to complete',
      30_000,
    );
    const handledBefore = await handled();

    await db.query(
      `UPDATE subscriber_checkpoints SET position_commit = 0, position_prepare = 0 WHERE name = $1`,
      [REACTOR],
    );
    // The next event makes the reactor's leader find its checkpoint moved and start again from the first event.
    const a = await t.bootstrap('Delta');
    const next = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'next@example.com' },
    });
    expect(next.status).toBe(201);
    const after = await sources();
    await eventually(
      async () => (await handled()) >= handledBefore + after.length,
      'the reactor to replay every event',
      30_000,
    );
    await eventsOnceThere(next, 'InvitationExpired');
    await eventually(
      async () => (await queue().getJobCounts('completed')).completed === after.length,
      'the new job to complete',
      30_000,
    );

    // One job per source event, under the id from its event id; none failed, none waiting.
    const jobs = await queue().getJobs(['completed', 'failed', 'waiting', 'delayed', 'active']);
    expect(jobs.map((j) => j.id).sort()).toEqual(after.map((e) => jobIdFor(e)).sort());
    expect(await queue().getJobCounts('failed', 'waiting', 'delayed', 'active')).toMatchObject({
      failed: 0,
      waiting: 0,
      delayed: 0,
      active: 0,
    });
    // And each lapse is recorded exactly once.
    const lapses = (await allEvents()).filter(
      (e) => e.type === 'InvitationExpired' || e.type === 'MemberTokenExpired',
    );
    expect(lapses.map((e) => e.metadata.causationId).sort()).toEqual(after.map((e) => e.id).sort());
  });

  it('a batch of events is enqueued at once, each job as one by one would add it, and again adds nothing', async () => {
    const reactor = t.app.get(ExpireWhenLapsedReactor);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const events = [1, 2, 3].map((n): StoredEvent => ({
      id: `0190a6c4-0000-7000-8000-00000000b0${n}0`,
      type: n === 2 ? 'InvitationCreated' : 'MemberTokenIssued',
      data:
        n === 2 ? { invitationId: `inv-batch-${n}`, expiresAt } : { tokenId: `tok-batch-${n}`, expiresAt },
      metadata: {
        workspaceId: 'ws-batch',
        actor: SYSTEM_ACTOR,
        correlationId: `corr-${n}`,
        occurredAt: new Date().toISOString(),
        schemaVersion: 1,
      },
      streamName: `batch-${n}`,
      revision: 0n,
      position: { commit: 1n, prepare: BigInt(n) },
    }));
    await reactor.reactBatch(events);
    await reactor.reactBatch(events);
    const jobs = await Promise.all(events.map((e) => queue().getJob(jobIdFor(e))));
    try {
      expect(jobs.map((j) => [j?.name, j?.data])).toEqual([
        [
          'expire-member-token',
          {
            kind: 'member-token',
            tokenId: 'tok-batch-1',
            workspaceId: 'ws-batch',
            correlationId: 'corr-1',
            causationId: events[0].id,
          },
        ],
        [
          'expire-invitation',
          {
            kind: 'invitation',
            invitationId: 'inv-batch-2',
            workspaceId: 'ws-batch',
            correlationId: 'corr-2',
            causationId: events[1].id,
          },
        ],
        [
          'expire-member-token',
          {
            kind: 'member-token',
            tokenId: 'tok-batch-3',
            workspaceId: 'ws-batch',
            correlationId: 'corr-3',
            causationId: events[2].id,
          },
        ],
      ]);
      for (const j of jobs) {
        expect(await j!.getState()).toBe('delayed');
        expect(j!.opts.delay).toBeGreaterThan(3_500_000);
        expect(j!.opts.delay).toBeLessThanOrEqual(3_600_000);
      }
    } finally {
      await Promise.all(jobs.map((j) => j?.remove()));
    }
  });
});
