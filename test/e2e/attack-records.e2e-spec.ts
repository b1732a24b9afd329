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

  describe('records racing their data type being deleted', () => {
    /** Whether a record's own stream ends with its deletion (or it never was written). */
    async function gone(recordId: number): Promise<boolean> {
      const events = await t.store.readStream(`record-${recordId}`);
      return !events.length || events[events.length - 1].type === 'DataRecordDeleted';
    }

    it.each([true, false])(
      'leaves no live record in a type deleted (force: %s) while records are created into it',
      async (force) => {
        let survivors: number[] = [];
        let created = 0;
        for (let round = 0; round < 6; round++) {
          const type = await createDataType(t, wid, admin, {
            slug: `racing_${force ? 'f' : 'n'}_${round}`,
            isCollection: true,
            fields: [{ slug: 'note', fieldType: 'text' }],
          });
          const base = recordsPath(wid, type.id);
          const post = (i: number) =>
            t.request('POST', base, {
              token: admin,
              body: { externalId: `r-${round}-${i}`, fieldValues: { note: `n${i}` } },
            });
          const bulk = t.request('POST', `${base}/bulk`, {
            token: admin,
            body: {
              records: Array.from({ length: 50 }, (_, i) => ({
                externalId: `b-${i}`,
                fieldValues: { note: 'b' },
              })),
            },
          });
          // With force, some records exist before the DELETE; without it, the DELETE meets only racing ones.
          const early = force ? await Promise.all([post(0), post(1)]) : [];
          const creates = Array.from({ length: 24 }, (_, i) => post(i + 2));
          const del = t.request('DELETE', `/w/${wid}/data-types/${type.id}${force ? '?force=true' : ''}`, {
            token: admin,
          });
          const results = [...early, ...(await Promise.all(creates)), await bulk];
          const deleted = await del;
          if (deleted.status !== 204) {
            // A delete without force refused because records exist: nothing to check this round.
            expect(force).toBe(false);
            expect(deleted.status).toBe(409);
            continue;
          }
          const ids: number[] = [];
          for (const r of results) {
            if (r.status === 201 && typeof r.body.id === 'number') {
              ids.push(r.body.id as number);
            } else if (Array.isArray(r.body?.results)) {
              for (const x of r.body.results as { recordId: number | null }[])
                if (x.recordId) ids.push(x.recordId);
            } else {
              // Refused because the type is gone (or going): never a 5xx.
              expect({ status: r.status, detail: r.body.detail }).toEqual({
                status: 404,
                detail: 'Data type not found',
              });
            }
          }
          created += ids.length;
          for (const id of ids) if (!(await gone(id))) survivors = [...survivors, id];
          // The type answers 404 for good, and so do its records.
          expect((await t.request('GET', base, { token: admin })).status).toBe(404);
        }
        expect({ survivors }).toEqual({ survivors: [] });
        expect(created).toBeGreaterThan(0);
      },
      120_000,
    );
  });
});
