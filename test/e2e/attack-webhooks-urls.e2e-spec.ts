import { startTestApp, TestApp } from '../support/app';

/**
 * A rule moved by PUT from a public receiver to one the service may not reach, under the
 * URL rules of production (https only, no private networks): every spelling of a loopback,
 * private or metadata address, and a name resolving to 127.0.0.1, is refused with a 400
 * that changes nothing (the rule keeps its URL and version, no event is appended).
 */
describe('attack: webhook rule URLs moved to forbidden addresses (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let ruleId: number;
  const publicUrl = 'https://93.184.216.34/hook';

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Forbidden moves'));
    const rule = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'member:updated', webhookUrl: publicUrl },
    });
    expect(rule.status).toBe(201);
    ruleId = rule.body.id;
  });
  afterAll(() => t.close());

  it.each([
    'https://localhost:8443/hook',
    'https://localhost./hook',
    'https://127.0.0.1/hook',
    'https://2130706433/hook',
    'https://0x7f.0.0.1/hook',
    'https://127.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[0:0:0:0:0:ffff:169.254.169.254]/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[fd00::1]/hook',
    'https://100.64.0.1/hook',
    'https://[64:ff9b::7f00:1]/hook',
    'https://[2002:7f00:1::]/hook',
    'http://93.184.216.34/hook',
  ])('refuses a PUT to %s, leaving the rule as it was', async (webhookUrl) => {
    const before = await t.request('GET', `/w/${wid}/event-rules/${ruleId}`, { token: key });
    for (const body of [{ webhookUrl }, { actionParams: { webhookUrl } }]) {
      const res = await t.request('PUT', `/w/${wid}/event-rules/${ruleId}`, { token: key, body });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/webhookUrl: /);
      await t.expectEvents(res, []);
    }
    const after = await t.request('GET', `/w/${wid}/event-rules/${ruleId}`, { token: key });
    expect(after.body.actionParams.webhookUrl).toBe(publicUrl);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });
});
