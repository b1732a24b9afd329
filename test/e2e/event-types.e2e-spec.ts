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
          eventType: 'data_record:created',
          description: 'new data record',
          feature: 'records',
          payloadFields: ['dataRecord', 'dataType', 'member'],
        },
        {
          eventType: 'data_record:updated',
          description: 'data record updated',
          feature: 'records',
          payloadFields: ['dataRecord', 'dataType', 'member', 'changedFields', 'previousValues'],
        },
        {
          eventType: 'data_record:changed',
          description: 'created or updated; payload includes an operation field',
          feature: 'records',
          payloadFields: ['operation', 'dataRecord', 'dataType', 'member'],
        },
        {
          eventType: 'member:updated',
          description: 'member information updated',
          feature: 'identity',
          payloadFields: ['member'],
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toMatch(/MemberUpdated|DataRecord|Claim/);
  });
});
