import { startTestApp, TestApp } from '../support/app';

/**
 * Accepting writes the member before it records the acceptance on the invitation; a
 * decline or a revocation landing in between wins the invitation. The member that accept
 * wrote must then not stay: the invitee was refused, so it is not in the workspace.
 */
describe('invitation races (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('accept racing decline or revoke: exactly one wins, and a refused accept leaves no active member', async () => {
    const a = await t.bootstrap();
    const inviteeEmail = `racer-${Date.now()}@example.com`;
    const invitee = await t.bootstrap(undefined, inviteeEmail);
    const outcomes: string[] = [];
    for (let round = 0; round < 12; round++) {
      const sent = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
        token: a.apiKey,
        body: { email: inviteeEmail },
      });
      expect(sent.status).toBe(201);
      const rival =
        round % 2 === 0
          ? t.request('POST', `/me/invitations/${sent.body.id}/decline`, { token: invitee.apiKey })
          : t.request('DELETE', `/w/${a.workspaceId}/invitations/${sent.body.id}`, { token: a.apiKey });
      const [accept, other] = await Promise.all([
        t.request('POST', `/me/invitations/${sent.body.id}/accept`, { token: invitee.apiKey }),
        rival,
      ]);
      const seen = await t.request('GET', `/w/${a.workspaceId}/invitations/${sent.body.id}`, {
        token: a.apiKey,
      });
      const members = await t.request(
        'GET',
        `/w/${a.workspaceId}/members?email=${encodeURIComponent(inviteeEmail)}&status=active`,
        { token: a.apiKey },
      );
      const active = (members.body.items as { id: number }[]).map((m) => m.id);
      outcomes.push(`${accept.status}:${seen.body.status}:${active.length}`);
      if (accept.status === 200) {
        // The accept won: the invitation says so and the member it names is the active one.
        expect(seen.body.status).toBe('accepted');
        expect(active).toEqual([accept.body.member.id]);
        const archived = await t.request('DELETE', `/w/${a.workspaceId}/members/${accept.body.member.id}`, {
          token: a.apiKey,
        });
        expect(archived.status).toBe(200);
      } else {
        expect({ status: accept.status, detail: accept.body.detail }).toEqual({
          status: 409,
          detail: `Invitation was ${seen.body.status}`,
        });
        expect(other.status).toBeLessThan(300);
        expect(['declined', 'revoked']).toContain(seen.body.status);
        expect(active).toEqual([]);
        const me = await t.request('GET', '/me', { token: invitee.apiKey });
        const workspaces = (me.body.memberships as { workspace: { id: string } }[]).map(
          (m) => m.workspace.id,
        );
        expect(workspaces).not.toContain(a.workspaceId);
      }
    }
    // Both outcomes are legitimate; the assertions above hold for each round whichever won.
    expect(outcomes).toHaveLength(12);
  });
});
