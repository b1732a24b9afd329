import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { uploadFile } from '../support/file-uploads';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { createDataType, recordsPath } from '../support/records-fixtures';

/**
 * A hostile and a careless client against records and event rules: another tenant's ids,
 * a member without records:admin reaching other members' records through filters,
 * upserts, bulk and grants, injection through field.<slug>, oversized bulk bodies, PHI in
 * error details, and webhook URLs that spell a private address in an unusual way.
 */
describe('attack: records and event rules (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let admin: string;
  let adminMember: number;
  let otherWid: string;
  let otherAdmin: string;
  let otherTypeId: number;
  let otherRecordId: number;
  let ann: { token: string; id: number };
  let bob: { token: string; id: number };
  let typeId: number;
  let base: string;
  let bobsRecord: number;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'attack-files-'));
    t = await startTestApp({ env: { FILE_STORAGE_DIR: dir } });
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
    adminMember = a.memberId;
    const b = await t.bootstrap('other tenant', 'other-owner@example.com');
    otherWid = b.workspaceId;
    otherAdmin = b.apiKey;
    const s1 = await signup(t, wid, admin, { email: 'ann@example.com' });
    const s2 = await signup(t, wid, admin, { email: 'bob@example.com' });
    ann = { token: s1.token, id: s1.member.id };
    bob = { token: s2.token, id: s2.member.id };
    typeId = (
      await createDataType(t, wid, admin, {
        slug: 'visits',
        isCollection: true,
        fields: [
          { slug: 'diagnosis', fieldType: 'text', shouldIndex: true },
          { slug: 'email', fieldType: 'email' },
        ],
      })
    ).id;
    base = recordsPath(wid, typeId);
    const bobs = await t.request('POST', base, {
      token: admin,
      body: { memberId: bob.id, externalId: 'bob-visit', fieldValues: { diagnosis: 'Bob secret diagnosis' } },
    });
    expect(bobs.status).toBe(201);
    bobsRecord = bobs.body.id as number;
    otherTypeId = (
      await createDataType(t, otherWid, otherAdmin, {
        slug: 'visits',
        fields: [{ slug: 'diagnosis', fieldType: 'text', shouldIndex: true }],
      })
    ).id;
    const other = await t.request('POST', recordsPath(otherWid, otherTypeId), {
      token: otherAdmin,
      body: { externalId: 'other-1', fieldValues: { diagnosis: 'other tenant diagnosis' } },
    });
    expect(other.status).toBe(201);
    otherRecordId = other.body.id as number;
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 404 for another tenant's data type and record ids, through every records route", async () => {
    const theirs = recordsPath(otherWid, otherTypeId);
    const ours = `/w/${wid}/data-types/${otherTypeId}`;
    for (const [method, path, body] of [
      ['GET', `${ours}/records`, undefined],
      ['GET', `${ours}/records/${otherRecordId}`, undefined],
      ['PUT', `${ours}/records/${otherRecordId}`, { fieldValues: { diagnosis: 'x' } }],
      ['DELETE', `${ours}/records/${otherRecordId}`, undefined],
      ['POST', `${ours}/upsert/other-1`, { fieldValues: { diagnosis: 'overwritten' } }],
      ['POST', `${ours}/records/bulk`, { upsert: true, records: [{ externalId: 'other-1' }] }],
      // Our type with their record id.
      ['GET', `${base}/${otherRecordId}`, undefined],
      ['PUT', `${base}/${otherRecordId}`, { fieldValues: { diagnosis: 'x' } }],
      ['DELETE', `${base}/${otherRecordId}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { token: admin, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    // Their credential on our workspace is refused before any record is looked at.
    const cross = await t.request('GET', `${base}/${bobsRecord}`, { token: otherAdmin });
    expect([403, 404]).toContain(cross.status);
    const still = await t.request('GET', `${theirs}/${otherRecordId}`, { token: otherAdmin });
    expect(still.body.fieldValues).toEqual({ diagnosis: 'other tenant diagnosis' });
  });

  it("refuses grants naming another tenant's members or data type", async () => {
    const otherMember = (await signup(t, otherWid, otherAdmin, { email: 'carl@example.com' })).member.id;
    for (const body of [
      { granteeMemberId: otherMember, ownerMemberId: bob.id, access: 'read' },
      { granteeMemberId: ann.id, ownerMemberId: otherMember, access: 'read' },
      { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'read', dataTypeId: otherTypeId },
    ]) {
      const res = await t.request('POST', `/w/${wid}/record-grants`, { token: admin, body });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it("never shows a member without records:admin another member's record through a list filter", async () => {
    for (const query of [
      `memberId=${bob.id}`,
      'externalId=bob-visit',
      'field.diagnosis=Bob%20secret%20diagnosis',
      'search=secret',
      `memberId=${bob.id}&externalId=bob-visit&search=bob`,
    ]) {
      const res = await t.request('GET', `${base}?${query}`, { token: ann.token });
      expect({ query, status: res.status, total: res.body.total }).toEqual({ query, status: 200, total: 0 });
    }
  });

  it("does not let a member grant itself access to another member's records", async () => {
    for (const access of ['read', 'write']) {
      const res = await t.request('POST', `/w/${wid}/record-grants`, {
        token: ann.token,
        body: { granteeMemberId: ann.id, ownerMemberId: bob.id, access },
      });
      expect(res.status).toBe(403);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    expect((await t.request('GET', `${base}/${bobsRecord}`, { token: ann.token })).status).toBe(403);
  });

  it("bounds the self rule by an API key's own scopes: a chats-only key does not read its member's records", async () => {
    const own = await t.request('POST', base, {
      token: admin,
      body: { memberId: adminMember, fieldValues: { diagnosis: "the owner's own diagnosis" } },
    });
    expect(own.status).toBe(201);
    const chatsOnly = await keyWithScopes(t, admin, ['chats:read']);
    const got = await t.request('GET', `${base}/${own.body.id}`, { token: chatsOnly });
    expect(got.status).toBe(403);
    expect(got.body.detail).toMatch(/records:read/);
    const list = await t.request('GET', `${base}?memberId=${adminMember}`, { token: chatsOnly });
    expect(list.body.total).toBe(0);
    const put = await t.request('PUT', `${base}/${own.body.id}`, {
      token: chatsOnly,
      body: { fieldValues: { diagnosis: 'x' } },
    });
    expect(put.status).toBe(403);
    // A member token is the member itself: its own records need no scope (SPEC self-access).
    const annsOwn = await t.request('POST', base, {
      token: ann.token,
      body: { memberId: ann.id, fieldValues: { diagnosis: 'ann' } },
    });
    expect(annsOwn.status).toBe(201);
    expect((await t.request('GET', `${base}/${annsOwn.body.id}`, { token: ann.token })).status).toBe(200);
  });

  it("answers an upsert onto another member's externalId without saying whose record it is", async () => {
    // Ann, with no scope, upserts her own record under Bob's externalId: refused, and the
    // answer must not confirm that the externalId exists or name its owner.
    const res = await t.request('POST', `/w/${wid}/data-types/${typeId}/upsert/bob-visit`, {
      token: ann.token,
      body: { memberId: ann.id, fieldValues: { diagnosis: 'overwrite attempt' } },
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).not.toContain(String(bob.id));
    expect(res.body.detail).not.toMatch(/belongs to/);
    expect(await t.eventsOf(res)).toEqual([]);
    // Bulk needs records:write; a key with it (acting as the Manager's member) but without
    // records:admin or a grant is in the same position for Bob's record.
    const writer = await keyWithScopes(t, admin, ['records:write']);
    const bulk = await t.request('POST', `${base}/bulk`, {
      token: writer,
      body: {
        upsert: true,
        records: [
          { memberId: adminMember, externalId: 'bob-visit', fieldValues: { diagnosis: 'overwrite' } },
        ],
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.importedCount).toBe(0);
    expect(bulk.body.errors[0].detail).not.toMatch(/belongs to/);
    expect(bulk.body.errors[0].detail).not.toContain(String(bob.id));
    const unchanged = await t.request('GET', `${base}/${bobsRecord}`, { token: admin });
    expect(unchanged.body.fieldValues).toEqual({ diagnosis: 'Bob secret diagnosis' });
  });

  it("does not let a signup's data overwrite another member's record by its externalId", async () => {
    const writer = await keyWithScopes(t, admin, ['records:write', 'members:write']);
    const res = await t.request('POST', `/w/${wid}/create-signup`, {
      token: writer,
      body: {
        member: { email: 'mallory@example.com' },
        data: { visits: { externalId: 'bob-visit', values: { diagnosis: 'rewritten by a signup' } } },
      },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).not.toMatch(/belongs to/);
    const unchanged = await t.request('GET', `${base}/${bobsRecord}`, { token: admin });
    expect(unchanged.body.fieldValues).toEqual({ diagnosis: 'Bob secret diagnosis' });
  });

  it('lets one of two members racing to upsert one externalId win, and never the other overwrite it', async () => {
    for (let round = 0; round < 5; round++) {
      const externalId = `race-${round}`;
      const [a, b] = await Promise.all(
        [ann, bob].map((m) =>
          t.request('POST', `/w/${wid}/data-types/${typeId}/upsert/${externalId}`, {
            token: m.token,
            body: { memberId: m.id, fieldValues: { diagnosis: `by ${m.id}` } },
          }),
        ),
      );
      const statuses = [a.status, b.status].sort();
      expect({ round, statuses }).toEqual({ round, statuses: [201, 403] });
      const winner = a.status === 201 ? ann : bob;
      const list = await t.request('GET', `${base}?externalId=${externalId}`, { token: admin });
      expect(list.body.total).toBe(1);
      expect(list.body.items[0]).toMatchObject({
        memberId: winner.id,
        fieldValues: { diagnosis: `by ${winner.id}` },
      });
    }
  });

  it('refuses malformed list parameters and body fields with a 400, never a 500 or a widened result', async () => {
    for (const query of [
      'sort=id;DROP%20TABLE%20x',
      'sort=member_id',
      'memberId=1%20OR%201=1',
      'memberId=-1',
      'page_size=100000',
    ]) {
      const res = await t.request('GET', `${base}?${query}`, { token: ann.token });
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
    const own = await t.request('POST', base, {
      token: ann.token,
      body: { memberId: ann.id, fieldValues: { diagnosis: 'mine' } },
    });
    expect(own.status).toBe(201);
    const moved = await t.request('PUT', `${base}/${own.body.id}`, {
      token: ann.token,
      body: { memberId: bob.id, fieldValues: { diagnosis: 'now bobs' } },
    });
    expect(moved.status).toBe(400);
    const grant = await t.request('POST', `/w/${wid}/record-grants`, {
      token: ann.token,
      body: { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'admin' },
    });
    expect(grant.status).toBe(400);
    expect(grant.body.detail).toMatch(/^access/);
  });

  it.each([
    ['field.__proto__', 'x'],
    ['field.constructor', 'x'],
    ["field.diagnosis'--", 'x'],
    ['field.diagnosis%22%3B%20DROP%20TABLE%20data_records%3B--', 'x'],
    ['field.', 'x'],
  ])('refuses the filter %s with a 400 naming it, never a 500', async (key, value) => {
    const res = await t.request('GET', `${base}?${key}=${value}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^query field\./);
  });

  it("keeps a value out of a validation error's detail (PHI)", async () => {
    const phi = 'patient-hiv-positive@@clinic';
    const res = await t.request('POST', base, {
      token: admin,
      body: { memberId: bob.id, fieldValues: { email: phi } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^fieldValues\.email: /);
    expect(JSON.stringify(res.body)).not.toContain('hiv');
    const bulk = await t.request('POST', `${base}/bulk`, {
      token: admin,
      body: { records: [{ fieldValues: { email: phi } }] },
    });
    expect(bulk.status).toBe(200);
    expect(JSON.stringify(bulk.body)).not.toContain('hiv');
  });

  it('refuses 10,001 records in one bulk request and writes none of them', async () => {
    const records = Array.from({ length: 10_001 }, (_, i) => ({ externalId: `flood-${i}` }));
    const res = await t.request('POST', `${base}/bulk`, { token: admin, body: { records } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^records: /);
    const after = await t.request('GET', `${base}?externalId=flood-0`, { token: admin });
    expect(after.body.total).toBe(0);
  });

  it("keeps a traversal out of a file's name, serves HTML as an attachment that is not sniffed, and another tenant's fileId is 404", async () => {
    const html = Buffer.from('<html><script>alert(document.cookie)</script></html>');
    const up = await uploadFile(t.baseUrl, wid, admin, html, {
      name: '../../../../etc/passwd/..\\..\\evil.html',
      type: 'image/png',
    });
    expect(up.status).toBe(201);
    expect(up.body.name).not.toMatch(/[\\/]|\.\./);
    expect(up.body.contentType).not.toBe('image/png');
    const content = await fetch(`${t.baseUrl}/w/${wid}/files/${up.body.id}/content`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).not.toMatch(/^text\/html|^image\/png/);
    expect(content.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    for (const [method, path] of [
      ['GET', `/w/${otherWid}/files/${up.body.id}`],
      ['GET', `/w/${otherWid}/files/${up.body.id}/content`],
      ['DELETE', `/w/${otherWid}/files/${up.body.id}`],
    ] as const) {
      const res = await t.request(method, path, { token: otherAdmin });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    expect((await t.request('GET', `/w/${wid}/files/${up.body.id}`, { token: admin })).status).toBe(200);
  });

  it('does not let automations:write without records:admin point a record rule at its own receiver (PHI)', async () => {
    const automator = await keyWithScopes(t, admin, ['automations:write', 'records:read', 'members:read']);
    const receiver = 'https://93.184.216.34/hook';
    for (const eventType of [
      'data_record:created',
      'record.updated',
      'data_record:changed',
      'record.deleted',
    ]) {
      const res = await t.request('POST', `/w/${wid}/event-rules`, {
        token: automator,
        body: { name: 'exfiltrate', eventType, actionParams: { webhookUrl: receiver } },
      });
      expect({ eventType, status: res.status }).toEqual({ eventType, status: 403 });
      expect(res.body.detail).toMatch(/^eventType: .*records:admin/);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    // A rule for members is the automator's to make; turning it into a record rule is not.
    const members = await t.request('POST', `/w/${wid}/event-rules`, {
      token: automator,
      body: { name: 'members', eventType: 'member:updated', actionParams: { webhookUrl: receiver } },
    });
    expect(members.status).toBe(201);
    const retyped = await t.request('PUT', `/w/${wid}/event-rules/${members.body.id}`, {
      token: automator,
      body: { eventType: 'data_record:created' },
    });
    expect(retyped.status).toBe(403);
    // Nor may it redirect a record rule records:admin made.
    const made = await t.request('POST', `/w/${wid}/event-rules`, {
      token: admin,
      body: { name: 'records', eventType: 'data_record:created', actionParams: { webhookUrl: receiver } },
    });
    expect(made.status).toBe(201);
    const redirected = await t.request('PUT', `/w/${wid}/event-rules/${made.body.id}`, {
      token: automator,
      body: { actionParams: { webhookUrl: 'https://93.184.216.35/stolen' } },
    });
    expect(redirected.status).toBe(403);
    expect(await t.eventsOf(redirected)).toEqual([]);
    const still = await t.request('GET', `/w/${wid}/event-rules/${made.body.id}`, { token: admin });
    expect(still.body.actionParams.webhookUrl).toBe(receiver);

    // The rule's deliveries carry the record: webhooks:read alone sees the log, not the body.
    const phi = await t.request('POST', base, {
      token: admin,
      body: { memberId: bob.id, fieldValues: { diagnosis: 'delivered diagnosis' } },
    });
    expect(phi.status).toBe(201);
    let deliveryId: string | undefined;
    for (let i = 0; i < 100 && !deliveryId; i++) {
      const logs = await t.request('GET', `/w/${wid}/webhook-logs?ruleId=${made.body.id}`, { token: admin });
      deliveryId = (logs.body.items as { id: string }[])[0]?.id;
      if (!deliveryId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(deliveryId).toBeDefined();
    const hooksReader = await keyWithScopes(t, admin, ['webhooks:read', 'records:read']);
    const hidden = await t.request('GET', `/w/${wid}/webhook-logs/${deliveryId}`, { token: hooksReader });
    expect(hidden.status).toBe(200);
    expect(hidden.body.requestBody).toBeUndefined();
    expect(JSON.stringify(hidden.body)).not.toContain('delivered diagnosis');
    const listed = await t.request('GET', `/w/${wid}/webhook-logs`, { token: hooksReader });
    expect(JSON.stringify(listed.body)).not.toContain('delivered diagnosis');
    const shown = await t.request('GET', `/w/${wid}/webhook-logs/${deliveryId}`, { token: admin });
    expect(shown.body.requestBody).toContain('delivered diagnosis');
  });

  it.each([
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://0177.0.0.1/hook',
    'https://127.1/hook',
    'https://0.0.0.0/hook',
    'https://[::]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[0:0:0:0:0:ffff:127.0.0.1]/hook',
    'https://[64:ff9b::7f00:1]/hook',
    'https://[2002:7f00:1::]/hook',
    'https://[fd00::1]/hook',
    'https://100.64.0.1/hook',
    'https://169.254.169.254./hook',
  ])('refuses the webhook URL %s, a private address in disguise', async (webhookUrl) => {
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: admin,
      body: { name: 'ssrf', eventType: 'member:updated', actionParams: { webhookUrl } },
    });
    expect({ webhookUrl, status: res.status }).toEqual({ webhookUrl, status: 400 });
    expect(res.body.detail).toMatch(/^actionParams.webhookUrl: /);
    expect(await t.eventsOf(res)).toEqual([]);
  });
});
