import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import { MEMBER_LEFT_QUEUE } from '../../src/modules/oauth/workers/member-left.processor';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, signup } from '../support/identity-fixtures';
import { App, createApp, Owner, ownerWithPassword, postForm, tokensFor } from '../support/oauth-browser';
import { eventually } from '../support/processes';

const REACTOR = 'oauth-member-left';

/**
 * A hostile pass on OAuth grants, seventh round: a grant (its access and refresh tokens)
 * must not outlive the member it acts as. Archiving the member revokes every grant of
 * that account in that workspace (OAuthGrantRevoked, reason member_left, in the grant's
 * own stream, caused by the MemberArchived); rejoining does not revive them, and neither
 * a replay nor a late job revokes a grant given after the rejoin.
 */
describe('attack: OAuth grants outliving their member, seventh round (e2e)', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const queue = () => t.app.get<Queue>(getQueueToken(MEMBER_LEFT_QUEUE), { strict: false });

  async function allEvents(): Promise<StoredEvent[]> {
    const all: StoredEvent[] = [];
    for (let after: StoredEvent['position'] | undefined; ;) {
      const batch = await t.store.readAll({ after, maxCount: 1000 });
      if (!batch.length) return all;
      all.push(...batch);
      after = batch[batch.length - 1].position;
    }
  }

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

  /** `guest` joins `host`'s workspace by invitation; answers its member id there. */
  async function join(host: Owner, guest: Owner): Promise<number> {
    const roles = await builtInRoles(t, host.workspaceId, host.apiKey);
    const invited = await t.request('POST', `/w/${host.workspaceId}/invitations`, {
      token: host.apiKey,
      body: { email: guest.email, memberRoleId: roles.Manager },
    });
    expect(invited.status).toBe(201);
    const accepted = await t.request('POST', `/me/invitations/${invited.body.id}/accept`, {
      token: guest.apiKey,
    });
    expect(accepted.status).toBe(200);
    return accepted.body.member.id as number;
  }

  const refresh = (app: App, refreshToken: string) =>
    postForm(
      t,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      { id: app.clientId, secret: app.clientSecret! },
    );
  const introspect = async (app: App, token: string) =>
    (await postForm(t, '/oauth/introspect', { token }, { id: app.clientId, secret: app.clientSecret! })).body;

  let host: Owner;
  let guest: Owner;
  let app: App;
  let revokedGrant: string;
  let newGrantTokens: Record<string, any>;
  let archive: TestResponse;

  it('archiving the member revokes its grants in that workspace: access refused at once, refresh invalid_grant, introspection inactive; its grants elsewhere live on', async () => {
    host = await ownerWithPassword(t, 'Host Co');
    guest = await ownerWithPassword(t, 'Guest Co');
    const memberId = await join(host, guest);
    app = await createApp(t, guest.apiKey);
    const inHost = await tokensFor(t, { ...guest, workspaceId: host.workspaceId }, app);
    const atHome = await tokensFor(t, guest, app);
    expect((await t.request('GET', `/w/${host.workspaceId}`, { token: inHost.access_token })).status).toBe(
      200,
    );
    expect(await introspect(app, inHost.refresh_token)).toMatchObject({ active: true });

    archive = await t.request('DELETE', `/w/${host.workspaceId}/members/${memberId}`, { token: host.apiKey });
    expect(archive.status).toBe(200);
    // At once: the token's member is gone from the workspace (404 as for any non-member),
    // or its grant is already revoked (401), whichever the request meets first.
    const atOnce = await t.request('GET', `/w/${host.workspaceId}`, { token: inHost.access_token });
    expect([401, 404]).toContain(atOnce.status);

    const events = await eventsOnceThere(archive, 'OAuthGrantRevoked');
    const [archived, revoked] = await t.expectEvents(archive, [
      { type: 'MemberArchived', data: { memberId, workspaceId: host.workspaceId } },
      { type: 'OAuthGrantRevoked', stream: /^oauth-grant-/, data: { appId: app.id, reason: 'member_left' } },
    ]);
    expect(events).toHaveLength(2);
    // Filed under the workspace, by the system, caused by the archive: auditors see why.
    expect(revoked.metadata).toMatchObject({
      workspaceId: host.workspaceId,
      causationId: archived.id,
      actor: SYSTEM_ACTOR,
    });
    revokedGrant = (revoked.data as { grantId: string }).grantId;

    const refused = await refresh(app, inHost.refresh_token);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    expect(await introspect(app, inHost.access_token)).toEqual({ active: false });
    expect(await introspect(app, inHost.refresh_token)).toEqual({ active: false });
    expect((await t.request('GET', `/w/${host.workspaceId}`, { token: inHost.access_token })).status).toBe(
      401,
    );

    // The grant in the guest's own workspace is untouched.
    expect((await t.request('GET', `/w/${guest.workspaceId}`, { token: atHome.access_token })).status).toBe(
      200,
    );
    expect(await introspect(app, atHome.access_token)).toMatchObject({ active: true });
    const rotated = await refresh(app, atHome.refresh_token);
    expect(rotated.status).toBe(200);

    // Rejoining does not revive the old tokens.
    await join(host, guest);
    expect((await t.request('GET', `/w/${host.workspaceId}`, { token: inHost.access_token })).status).toBe(
      401,
    );
    const stillRefused = await refresh(app, inHost.refresh_token);
    expect(stillRefused.status).toBe(400);
    expect(stillRefused.body.error).toBe('invalid_grant');
    expect(await introspect(app, inHost.access_token)).toEqual({ active: false });
    expect(await introspect(app, inHost.refresh_token)).toEqual({ active: false });

    // A new consent after the rejoin is a new grant, and works.
    newGrantTokens = await tokensFor(t, { ...guest, workspaceId: host.workspaceId }, app);
    expect(
      (await t.request('GET', `/w/${host.workspaceId}`, { token: newGrantTokens.access_token })).status,
    ).toBe(200);
  });

  it('neither a replay of the reactor nor the job run again revokes twice, nor ends the grant given after the rejoin', async () => {
    expect(revokedGrant).toBeDefined();
    const handled = async () =>
      Number(
        (
          (await db.query(`SELECT events_handled AS n FROM subscriber_checkpoints WHERE name = $1`, [
            REACTOR,
          ])) as { n: string }[]
        )[0]?.n ?? 0,
      );
    const revocations = async () => (await allEvents()).filter((e) => e.type === 'OAuthGrantRevoked');
    expect(await revocations()).toHaveLength(1);
    const handledBefore = await handled();

    await db.query(
      `UPDATE subscriber_checkpoints SET position_commit = 0, position_prepare = 0 WHERE name = $1`,
      [REACTOR],
    );
    // The next archive makes the reactor's leader find its checkpoint moved and replay from the first event.
    const other = await signup(t, host.workspaceId, host.apiKey, {
      email: `other-${process.pid}@example.com`,
    });
    const gone = await t.request('DELETE', `/w/${host.workspaceId}/members/${other.member.id}`, {
      token: host.apiKey,
    });
    expect(gone.status).toBe(200);
    const archives = (await allEvents()).filter((e) => e.type === 'MemberArchived');
    expect(archives).toHaveLength(2);
    await eventually(
      async () => (await handled()) >= handledBefore + archives.length,
      'the reactor to replay every archive',
      30_000,
    );
    // The first job ran again all the same (as after its id has been forgotten): nothing new.
    const [first] = (await t.eventsOf(archive)).filter((e) => e.type === 'MemberArchived');
    const again = await queue().add('revoke-grants', {
      workspaceId: host.workspaceId,
      accountUuid: guest.accountUuid,
      memberId: (first.data as { memberId: number }).memberId,
      leftAt: (first.data as { archivedAt: string }).archivedAt,
      correlationId: first.metadata.correlationId,
      causationId: first.id,
    });
    await eventually(async () => (await again.getState()) === 'completed', 'the job run again', 30_000);
    expect(await queue().getJobCounts('failed')).toMatchObject({ failed: 0 });

    const all = await revocations();
    expect(all.map((e) => (e.data as { grantId: string }).grantId)).toEqual([revokedGrant]);
    expect(
      (await t.request('GET', `/w/${host.workspaceId}`, { token: newGrantTokens.access_token })).status,
    ).toBe(200);
    expect(await introspect(app, newGrantTokens.refresh_token)).toMatchObject({ active: true });
  });
});
