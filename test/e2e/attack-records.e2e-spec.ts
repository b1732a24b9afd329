import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { createDataType, recordsPath } from '../support/records-fixtures';

/**
 * A hostile and a careless client against records: signup's `data` part that would fail
 * only once the member exists, records racing their type's forced deletion, another
 * tenant's ids, narrow keys, odd input, conditional and concurrent writes.
 */
describe('attack: records (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
  });
  afterAll(() => t.close());

  describe("signup's data part is checked whole before anything is written", () => {
    let visits: number;
    let profile: number;
    let carl: number;

    beforeAll(async () => {
      visits = (
        await createDataType(t, wid, admin, {
          slug: 'visits',
          isCollection: true,
          fields: [{ slug: 'note', fieldType: 'text' }],
        })
      ).id;
      profile = (
        await createDataType(t, wid, admin, {
          slug: 'profile',
          isCollection: false,
          fields: [{ slug: 'dob', fieldType: 'date' }],
        })
      ).id;
      carl = (await signup(t, wid, admin, { email: 'carl@example.com' })).member.id;
      const held = await t.request('POST', recordsPath(wid, visits), {
        token: admin,
        body: { memberId: carl, externalId: 'v-carl', fieldValues: { note: 'carl note' } },
      });
      expect(held.status).toBe(201);
      const orphan = await t.request('POST', recordsPath(wid, visits), {
        token: admin,
        body: { externalId: 'v-nobody', fieldValues: { note: 'no member' } },
      });
      expect(orphan.status).toBe(201);
      const carlsProfile = await t.request('POST', recordsPath(wid, profile), {
        token: admin,
        body: { memberId: carl, externalId: 'p-carl', fieldValues: { dob: '1970-01-01' } },
      });
      expect(carlsProfile.status).toBe(201);
    });

    async function membersNamed(email: string): Promise<number> {
      const res = await t.request('GET', `/w/${wid}/members?email=${encodeURIComponent(email)}`, {
        token: admin,
      });
      return res.body.total as number;
    }

    it("refuses a new member an externalId another member's record holds: 409, no member, account or token", async () => {
      for (const externalId of ['v-carl', 'v-nobody']) {
        const res = await t.request('POST', `/w/${wid}/create-signup`, {
          token: admin,
          body: {
            member: { email: 'dora@example.com' },
            data: { visits: { externalId, values: { note: 'overwrite' } } },
          },
        });
        expect({ externalId, status: res.status }).toEqual({ externalId, status: 409 });
        expect(res.body.detail).toMatch(/^data\.visits\.externalId: /);
        expect(JSON.stringify(res.body)).not.toContain('carl note');
        expect(await t.eventsOf(res)).toEqual([]);
      }
      expect(await membersNamed('dora@example.com')).toBe(0);
    });

    it('refuses every invalid record of data, wherever it is in the object, before the first is written', async () => {
      const res = await t.request('POST', `/w/${wid}/create-signup`, {
        token: admin,
        body: {
          member: { email: 'erin@example.com' },
          data: {
            visits: { externalId: 'v-erin', values: { note: 'fine' } },
            profile: { values: { dob: '31/12/1999' } },
          },
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^data\.profile\.values\.dob: /);
      expect(res.body.detail).not.toContain('31/12/1999');
      expect(await t.eventsOf(res)).toEqual([]);
      expect(await membersNamed('erin@example.com')).toBe(0);
    });

    it('refuses an existing member a second record of a type that is not a collection: no token issued', async () => {
      const res = await t.request('POST', `/w/${wid}/create-signup`, {
        token: admin,
        body: {
          member: { email: 'carl@example.com' },
          data: { profile: { externalId: 'p-other', values: { dob: '1971-01-01' } } },
        },
      });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/^data\.profile: /);
      expect(await t.eventsOf(res)).toEqual([]);
      // The member's own record, by its externalId or by none, is still updated in place.
      for (const entry of [
        { externalId: 'p-carl', values: { dob: '1972-01-01' } },
        { values: { dob: '1973-01-01' } },
      ]) {
        const ok = await t.request('POST', `/w/${wid}/create-signup`, {
          token: admin,
          body: { member: { email: 'carl@example.com' }, data: { profile: entry } },
        });
        expect(ok.status).toBe(200);
        await t.expectEvents(ok, [{ type: 'MemberTokenIssued' }, { type: 'DataRecordUpdated' }]);
      }
    });

    it('refuses a records:write key without records:admin the existing record of another member, before the signup', async () => {
      const writer = await keyWithScopes(t, admin, ['members:write', 'records:write']);
      const res = await t.request('POST', `/w/${wid}/create-signup`, {
        token: writer,
        body: {
          member: { email: 'fay@example.com' },
          data: { visits: { externalId: 'v-carl', values: { note: 'mine now' } } },
        },
      });
      expect(res.status).toBe(403);
      expect(await t.eventsOf(res)).toEqual([]);
      expect(await membersNamed('fay@example.com')).toBe(0);
    });
  });
});
