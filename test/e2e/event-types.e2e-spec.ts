import { startTestApp, TestApp } from '../support/app';

describe('GET /event-types (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists the public events, without a credential and without naming internal events', async () => {
    const res = await t.request('GET', '/event-types');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      eventTypes: [
        {
          eventType: 'member:updated',
          description: 'member information updated',
          feature: 'identity',
          payloadFields: ['member'],
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toMatch(/MemberUpdated|Claim/);
  });
});
