import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, customRole, importMembers, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { CONTACT_FIELDS, createDataType, recordsPath } from '../support/records-fixtures';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://phones.example.test/api/v2';
const RULE =
  'must be a phone number in international form and nothing else (no extension), e.g. +14155550123';
/** Texts holding a number that is not the whole text: libphonenumber's default kept another number. */
const NOT_A_NUMBER = ['call me +14155550100 now', '+14155550100 ext. 12', '+14155550100abc'];

/**
 * Sixth pass on phone numbers: every phone the service takes (member phones, records'
 * `phone` fields, messaging's numbers) goes through core's one strict parser, so one number
 * written two ways is one member; and a stranger texting a number gets its `signupRoleId`.
 */
describe('Attack: phone numbers, sixth round (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let roles: Record<string, number>;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Phone Clinic'));
    roles = await builtInRoles(t, wid, key);
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const req = (method: string, path: string, body?: unknown) =>
    t.request(method, `/w/${wid}${path}`, { token: key, body });
  const refused = async (res: TestResponse, field: string) => {
    expect({ status: res.status, detail: res.body.detail }).toEqual({
      status: 400,
      detail: `${field}: ${RULE}`,
    });
    expect(await t.eventsOf(res)).toEqual([]);
  };
  const inbound = (to: string, from: string, body: string, sid: string) =>
    peer.webhook(`${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`, t.baseUrl, PUBLIC_BASE_URL, {
      AccountSid: peer.accountSid,
      MessageSid: sid,
      From: from,
      To: to,
      Body: body,
    });
  /** What the inbound webhook appended itself (it answers without waiting for the store's readers). */
  const appendedBy = (res: Response, count: number) =>
    eventually(async () => {
      const events = (await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never)).filter(
        (e) => !e.metadata.causationId,
      );
      return events.length >= count ? events : undefined;
    }, `${count} events appended by the webhook`);
  const phoneNumber = async (number: string, signupRoleId?: number) => {
    const res = await req('POST', '/phone-numbers', { number, signupRoleId });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };

  describe('member phones: the whole text is the number', () => {
    it('create-signup refuses words around the number or an extension (400 naming member.phone), creating nobody', async () => {
      for (const phone of NOT_A_NUMBER) {
        const res = await req('POST', '/create-signup', { member: { phone, name: 'Lenient' } });
        await refused(res, 'member.phone');
      }
      const members = await req('GET', '/members?search=Lenient');
      expect(members.body.total).toBe(0);
    });

    it('member PUT refuses them (400 naming phone) and keeps the phone it had', async () => {
      const ann = await signup(t, wid, key, { phone: '+14155550601', name: 'Ann' });
      for (const phone of NOT_A_NUMBER) {
        const res = await req('PUT', `/members/${ann.member.id}`, { phone });
        await refused(res, 'phone');
      }
      expect((await req('GET', `/members/${ann.member.id}`)).body.phone).toBe('+14155550601');
    });

    it('member import fails the row naming phone, without echoing it; the other rows import', async () => {
      const res = await importMembers(t, wid, key, [
        { name: 'Imp A', phone: '+1 (415) 555-0611' },
        { name: 'Imp B', phone: 'call me +14155550612 now' },
        { name: 'Imp C', phone: '+14155550613 ext. 12' },
      ]);
      expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([0]);
      expect(res.body.errors).toEqual([
        { index: 1, detail: `phone: ${RULE}` },
        { index: 2, detail: `phone: ${RULE}` },
      ]);
      expect(JSON.stringify(res.body)).not.toMatch(/455506(12|13)/);
      const imported = await req('GET', `/members/${res.body.results[0].memberId}`);
      expect(imported.body.phone).toBe('+14155550611');
      expect((await req('GET', '/members?search=Imp')).body.total).toBe(1);
    });

    it('PUT /me refuses them (400 naming phone)', async () => {
      const bob = await signup(t, wid, key, { phone: '+14155550621', name: 'Bob' });
      const res = await t.request('PUT', '/me', { token: bob.token, body: { phone: '+14155550621 ext. 3' } });
      await refused(res, 'phone');
    });

    it('one number written two ways is one member: signup, uniqueness and an inbound text all find it', async () => {
      const first = await signup(t, wid, key, { phone: '+1 (415) 555-0631', name: 'Cy' });
      expect((await req('GET', `/members/${first.member.id}`)).body.phone).toBe('+14155550631');
      const again = await signup(t, wid, key, { phone: '+14155550631' });
      expect(again.member.id).toBe(first.member.id);
      // The claim holds the normalised form: another member cannot take it written differently.
      const other = await signup(t, wid, key, { phone: '+14155550632' });
      const taken = await req('PUT', `/members/${other.member.id}`, { phone: '+1.415.555.0631' });
      expect(taken.status).toBe(409);
      const number = '+14155550690';
      await phoneNumber(number);
      const res = await inbound(number, '+14155550631', 'Hello', 'SMphones6same01');
      expect(res.status).toBe(200);
      const events = await appendedBy(res, 2);
      expect(events.map((e) => e.type)).toEqual(['ChatCreated', 'MessageReceived']);
      expect(events[1].data).toMatchObject({ memberId: first.member.id });
    });
  });

  describe('records: phone fields', () => {
    let typeId: number;
    beforeAll(async () => {
      typeId = (await createDataType(t, wid, key, { slug: 'phones6', fields: CONTACT_FIELDS })).id;
    });

    it('a record create or update refuses them (400 naming fieldValues.phone), writing nothing', async () => {
      for (const phone of NOT_A_NUMBER) {
        const res = await t.request('POST', recordsPath(wid, typeId), {
          token: key,
          body: { fieldValues: { name: 'Rec', phone } },
        });
        await refused(res, 'fieldValues.phone');
      }
      const ok = await t.request('POST', recordsPath(wid, typeId), {
        token: key,
        body: { fieldValues: { name: 'Rec', phone: '+1 (415) 555-0641' } },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.fieldValues.phone).toBe('+14155550641');
      const put = await t.request('PUT', `${recordsPath(wid, typeId)}/${ok.body.id}`, {
        token: key,
        body: { fieldValues: { phone: '+14155550642 ext. 7' } },
      });
      await refused(put, 'fieldValues.phone');
      const now = await t.request('GET', `${recordsPath(wid, typeId)}/${ok.body.id}`, { token: key });
      expect(now.body.fieldValues.phone).toBe('+14155550641');
    });

    it("a signup's data refuses them (400 naming data.<slug>.values.phone), creating no member", async () => {
      const res = await req('POST', '/create-signup', {
        member: { email: 'data-phone@example.com' },
        data: { phones6: { externalId: 'sd1', values: { name: 'SD', phone: 'call me +14155550660 now' } } },
      });
      await refused(res, 'data.phones6.values.phone');
      expect((await req('GET', '/members?email=data-phone@example.com')).body.total).toBe(0);
    });

    it('bulk fails the record naming the field, without echoing the value; the others are written', async () => {
      const res = await t.request('POST', `${recordsPath(wid, typeId)}/bulk`, {
        token: key,
        body: {
          records: [
            { externalId: 'b1', fieldValues: { name: 'B1', phone: '+44 20 7946 0958' } },
            { externalId: 'b2', fieldValues: { name: 'B2', phone: 'call me +14155550652 now' } },
            { externalId: 'b3', fieldValues: { name: 'B3', phone: '+14155550653 ext. 12' } },
          ],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: false, totalCount: 3, importedCount: 1 });
      expect(res.body.errors).toEqual([
        { index: 1, externalId: 'b2', detail: `fieldValues.phone: ${RULE}` },
        { index: 2, externalId: 'b3', detail: `fieldValues.phone: ${RULE}` },
      ]);
      expect(JSON.stringify(res.body)).not.toMatch(/455506(52|53)/);
      const events = await t.eventsOf(res);
      expect(events.map((e) => e.type)).toEqual(['DataRecordCreated']);
    });
  });

  describe("inbound SMS: a stranger gets the number's signupRoleId", () => {
    const memberCreated = (events: StoredEvent[]) => {
      expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'ChatCreated', 'MessageReceived']);
      return events[0].data as { memberId: number; memberRoleId: number; phone: string };
    };

    it('creates the member with the signup role (MemberCreated and GET /members/{id} say so)', async () => {
      const texters = await customRole(t, wid, key, 'Texters', ['chats:read']);
      const number = '+14155550700';
      await phoneNumber(number, texters);
      const res = await inbound(number, '+14155550701', 'Hi there', 'SMphones6role01');
      expect(res.status).toBe(200);
      const created = memberCreated(await appendedBy(res, 3));
      expect(created).toMatchObject({ memberRoleId: texters, phone: '+14155550701' });
      const member = await eventually(async () => {
        const r = await req('GET', `/members/${created.memberId}`);
        return r.status === 200 ? r : undefined;
      }, 'the new member');
      expect(member.body).toMatchObject({ memberRoleId: texters, phone: '+14155550701' });
    });

    it('a member who exists keeps its role; a number without a signup role gives External', async () => {
      const texters = await customRole(t, wid, key, 'Texters 2', ['chats:read']);
      const number = '+14155550710';
      await phoneNumber(number, texters);
      const dee = await signup(t, wid, key, { phone: '+14155550711', name: 'Dee' });
      const before = (await req('GET', `/members/${dee.member.id}`)).body.memberRoleId;
      expect(before).not.toBe(texters);
      const res = await inbound(number, '+1 415-555-0711', 'Hello', 'SMphones6role02');
      expect(res.status).toBe(200);
      const events = await appendedBy(res, 2);
      expect(events.map((e) => e.type)).toEqual(['ChatCreated', 'MessageReceived']);
      expect((await req('GET', `/members/${dee.member.id}`)).body.memberRoleId).toBe(before);

      const plain = '+14155550720';
      await phoneNumber(plain);
      const stranger = await inbound(plain, '+14155550721', 'Hello', 'SMphones6role03');
      expect(memberCreated(await appendedBy(stranger, 3))).toMatchObject({ memberRoleId: roles.External });
    });

    it('falls back to External when the signup role was deleted since', async () => {
      const gone = await customRole(t, wid, key, 'Gone Soon', ['chats:read']);
      const number = '+14155550730';
      await phoneNumber(number, gone);
      expect((await req('DELETE', `/member-roles/${gone}`)).status).toBe(204);
      const res = await inbound(number, '+14155550731', 'Anyone?', 'SMphones6role04');
      expect(res.status).toBe(200);
      const created = memberCreated(await appendedBy(res, 3));
      expect(created.memberRoleId).toBe(roles.External);
      const member = await eventually(async () => {
        const r = await req('GET', `/members/${created.memberId}`);
        return r.status === 200 ? r : undefined;
      }, 'the new member');
      expect(member.body.memberRoleId).toBe(roles.External);
    });

    it('a signup role merged since gives its target, where its holders went', async () => {
      // Roles merge into a built-in role: User here.
      const old = await customRole(t, wid, key, 'Old Texters', ['chats:read']);
      const number = '+14155550750';
      await phoneNumber(number, old);
      const merged = await req('POST', `/member-roles/${old}/merge`, { targetRoleId: roles.User });
      expect(merged.status).toBe(200);
      const res = await inbound(number, '+14155550751', 'Hi', 'SMphones6role07');
      expect(memberCreated(await appendedBy(res, 3)).memberRoleId).toBe(roles.User);
    });

    it('follows a number whose signupRoleId was changed by PUT, once the change answered', async () => {
      const first = await customRole(t, wid, key, 'First Role', ['chats:read']);
      const second = await customRole(t, wid, key, 'Second Role', ['chats:read']);
      const number = '+14155550740';
      const id = await phoneNumber(number, first);
      // The inbound path has read (and keeps) the number with its first role.
      const before = await inbound(number, '+14155550741', 'Hi', 'SMphones6role05');
      expect(memberCreated(await appendedBy(before, 3)).memberRoleId).toBe(first);
      expect((await req('PUT', `/phone-numbers/${id}`, { signupRoleId: second })).status).toBe(200);
      const after = await inbound(number, '+14155550742', 'Hi', 'SMphones6role06');
      expect(memberCreated(await appendedBy(after, 3)).memberRoleId).toBe(second);
    });
  });

  describe('page size and its alias', () => {
    it('both given with different values is a 400 naming both on every list; equal values are fine', async () => {
      for (const list of ['/phone-numbers', '/members', '/member-roles', `/data-types`, '/chats']) {
        const res = await req('GET', `${list}?pageSize=2&page_size=3`);
        expect({ list, status: res.status, detail: res.body.detail }).toEqual({
          list,
          status: 400,
          detail: 'page_size: must equal pageSize when both are given (it is an alias of pageSize)',
        });
        const same = await req('GET', `${list}?pageSize=2&page_size=2`);
        expect({ list, status: same.status, pageSize: same.body.pageSize }).toEqual({
          list,
          status: 200,
          pageSize: 2,
        });
      }
    });
  });
});
