import { grants } from '../../src/core/auth/scopes';
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
  let adminMember: number;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
    adminMember = a.memberId;
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
        let deletedRounds = 0;
        // Six rounds, and more (up to 30) until the DELETE has won one while records were being created.
        for (let round = 0; round < 30 && (round < 6 || deletedRounds === 0); round++) {
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
          deletedRounds++;
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
        expect(deletedRounds).toBeGreaterThan(0);
        // With force, records written before the DELETE are among those checked. Without it, a
        // create racing a DELETE that wins sees the deletion once the projections have passed
        // its append, and answers 404 (its record deleted), so none need have answered 201.
        if (force) expect(created).toBeGreaterThan(0);
      },
      120_000,
    );
  });

  describe('keys of one scope, odd input, conditional and concurrent writes', () => {
    let typeId: number;
    let base: string;
    let recordId: number;
    let ownerMember: number;

    beforeAll(async () => {
      typeId = (
        await createDataType(t, wid, admin, {
          slug: 'charts',
          isCollection: true,
          fields: [
            { slug: 'note', fieldType: 'text', shouldIndex: true },
            { slug: 'age', fieldType: 'number' },
          ],
        })
      ).id;
      base = recordsPath(wid, typeId);
      ownerMember = adminMember;
      const other = (await signup(t, wid, admin, { email: 'gus@example.com' })).member.id;
      const rec = await t.request('POST', base, {
        token: admin,
        body: { memberId: other, externalId: 'chart-1', fieldValues: { note: 'gus private note', age: 40 } },
      });
      expect(rec.status).toBe(201);
      recordId = rec.body.id as number;
    });

    it("lets a key holding one scope reach no records route that needs another, nor another member's record", async () => {
      const w = `/w/${wid}`;
      const routes: [string, string, unknown, string][] = [
        ['POST', `${w}/data-types`, { name: 'x', slug: 'x_narrow', fields: [] }, 'datatypes:write'],
        ['PUT', `${w}/data-types/${typeId}`, { name: 'renamed' }, 'datatypes:write'],
        ['DELETE', `${w}/data-types/${typeId}?force=true`, undefined, 'datatypes:admin'],
        ['GET', `${base}/${recordId}`, undefined, 'records:admin'],
        ['PUT', `${base}/${recordId}`, { fieldValues: { note: 'changed' } }, 'records:admin'],
        ['DELETE', `${base}/${recordId}`, undefined, 'records:admin'],
        [
          'POST',
          `${w}/data-types/${typeId}/upsert/chart-1`,
          { fieldValues: { note: 'over' } },
          'records:admin',
        ],
        [
          'POST',
          `${base}/bulk`,
          { upsert: true, records: [{ externalId: 'chart-1', fieldValues: {} }] },
          'records:admin',
        ],
        ['POST', base, { memberId: ownerMember + 1000, fieldValues: { note: 'x' } }, 'records:write'],
        ['GET', `${w}/record-grants`, undefined, 'records:admin'],
        [
          'POST',
          `${w}/record-grants`,
          { granteeMemberId: ownerMember, ownerMemberId: ownerMember, access: 'read' },
          'records:admin',
        ],
      ];
      for (const scope of [
        'records:read',
        'records:write',
        'datatypes:read',
        'datatypes:write',
        'members:admin',
      ]) {
        const key = await keyWithScopes(t, admin, [scope]);
        for (const [method, path, body, needed] of routes) {
          if (grants([scope], needed)) continue;
          const res = await t.request(method, path, { token: key, body });
          const emptyList =
            (method === 'GET' &&
              res.status === 200 &&
              Array.isArray(res.body.items) &&
              !res.body.items.length) ||
            // Bulk answers per record: every one failed.
            (path.endsWith('/bulk') && res.body.success === false && res.body.importedCount === 0);
          expect({ scope, method, path, refused: [400, 403, 404].includes(res.status) || emptyList }).toEqual(
            {
              scope,
              method,
              path,
              refused: true,
            },
          );
          expect(JSON.stringify(res.body)).not.toContain('gus private note');
          expect(await t.eventsOf(res)).toEqual([]);
        }
        const list = await t.request('GET', base, { token: key });
        expect(JSON.stringify(list.body)).not.toContain('gus private note');
      }
    }, 60_000);

    it('refuses odd values and ids naming the field, and 404s odd path ids', async () => {
      for (const [raw, detail] of [
        [`{"fieldValues":{"age":1e400}}`, /^fieldValues\.age: must be a number/],
        [`{"fieldValues":{"age":"40"}}`, /^fieldValues\.age: must be a number/],
        [`{"fieldValues":{"note":["a"]}}`, /^fieldValues\.note: must be a string/],
        [`{"fieldValues":["note"]}`, /^fieldValues/],
        [`{"fieldValues":{"note":"${'x'.repeat(10_001)}"}}`, /^fieldValues\.note: must be at most/],
        [`{"fieldValues":{},"memberId":-1}`, /^memberId/],
        [`{"fieldValues":{},"memberId":1.5}`, /^memberId/],
        [`{"fieldValues":{},"memberId":99999999999}`, /^memberId/],
        [`{"fieldValues":{},"externalId":"${'e'.repeat(5000)}"}`, /^externalId/],
        [`[{"fieldValues":{}}]`, /./],
      ] as const) {
        const res = await t.request('POST', base, { token: admin, raw });
        expect({ raw: raw.slice(0, 60), status: res.status }).toEqual({ raw: raw.slice(0, 60), status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      for (const id of ['-1', '0', '1.5', '99999999999999999999', 'abc']) {
        for (const path of [
          `${base}/${id}`,
          `/w/${wid}/data-types/${id}`,
          `/w/${wid}/data-types/${id}/records`,
        ]) {
          const res = await t.request('GET', path, { token: admin });
          expect({ path, status: res.status }).toEqual({ path, status: 404 });
        }
      }
      const longKey = await t.request('POST', `/w/${wid}/data-types/${typeId}/upsert/${'k'.repeat(5000)}`, {
        token: admin,
        body: { fieldValues: {} },
      });
      expect([400, 414]).toContain(longKey.status);
      expect(await t.eventsOf(longKey)).toEqual([]);
    });

    it('refuses a stale If-Match, lets one of two PUTs pinned to one version win, and reuses no Idempotency-Key', async () => {
      const path = `${base}/${recordId}`;
      const stale = await t.request('PUT', path, {
        token: admin,
        headers: { 'if-match': '"999"' },
        body: { fieldValues: { note: 'stale' } },
      });
      expect(stale.status).toBe(412);
      expect(await t.eventsOf(stale)).toEqual([]);
      const etag = (await t.request('GET', path, { token: admin })).headers.get('etag')!;
      const puts = await Promise.all(
        [1, 2, 3].map((i) =>
          t.request('PUT', path, {
            token: admin,
            headers: { 'if-match': etag },
            body: { fieldValues: { age: i } },
          }),
        ),
      );
      expect(puts.map((p) => p.status).sort()).toEqual([200, 412, 412]);
      const del = await t.request('DELETE', path, { token: admin, headers: { 'if-match': etag } });
      expect(del.status).toBe(412);

      const headers = { 'idempotency-key': 'records-attack-1' };
      const first = await t.request('POST', base, {
        token: admin,
        headers,
        body: { fieldValues: { note: 'a' } },
      });
      expect(first.status).toBe(201);
      const other = await t.request('POST', base, {
        token: admin,
        headers,
        body: { fieldValues: { note: 'b' } },
      });
      expect(other.status).toBe(422);
      expect(await t.eventsOf(other)).toEqual([]);
    });

    it('makes one record of concurrent upserts of one externalId, and keeps the last of concurrent PUTs whole', async () => {
      const upserts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          t.request('POST', `/w/${wid}/data-types/${typeId}/upsert/race-1`, {
            token: admin,
            body: { fieldValues: { note: `n${i}`, age: i } },
          }),
        ),
      );
      expect(upserts.map((u) => u.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(upserts.map((u) => u.body.id)).size).toBe(1);
      const id = upserts[0].body.id as number;
      const puts = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.request('PUT', `${base}/${id}`, {
            token: admin,
            body: { fieldValues: { note: `p${i}`, age: 100 + i } },
          }),
        ),
      );
      expect(puts.map((p) => [p.status, p.body.detail])).toEqual(puts.map(() => [200, undefined]));
      const final = await t.request('GET', `${base}/${id}`, { token: admin });
      // Each PUT wrote both fields together: the record holds one PUT's pair, never a mix.
      const i = Number((final.body.fieldValues.note as string).slice(1));
      expect(final.body.fieldValues).toEqual({ note: `p${i}`, age: 100 + i });
      const events = await t.store.readStream(`record-${id}`);
      expect(events.filter((e) => e.type === 'DataRecordCreated')).toHaveLength(1);
    });
  });
});
