import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { createDataType, recordsPath } from '../support/records-fixtures';

/**
 * A hostile and a careless client against records, fifth round: grants given, doubled,
 * revoked and listed; bulk imports with doubled externalIds, archived and foreign members
 * and profile types; list sorting, paging and searching with LIKE's wildcards; upsert paths
 * with encoded slashes and unicode; racing schema writes; and where record values travel.
 */
describe('attack: records, fifth round (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let admin: string;
  let adminMember: number;
  let otherWid: string;
  let otherAdmin: string;
  let ann: { token: string; id: number };
  let bob: { token: string; id: number };
  let notes: number;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
    adminMember = a.memberId;
    const b = await t.bootstrap('other tenant', 'other-owner@example.com');
    otherWid = b.workspaceId;
    otherAdmin = b.apiKey;
    const s1 = await signup(t, wid, admin, { email: 'ann5@example.com' });
    const s2 = await signup(t, wid, admin, { email: 'bob5@example.com' });
    ann = { token: s1.token, id: s1.member.id };
    bob = { token: s2.token, id: s2.member.id };
    notes = (
      await createDataType(t, wid, admin, {
        slug: 'notes',
        isCollection: true,
        fields: [
          { slug: 'text', fieldType: 'text', shouldIndex: true },
          { slug: 'plain', fieldType: 'text' },
          { slug: 'score', fieldType: 'number' },
        ],
      })
    ).id;
  });
  afterAll(() => t.close());

  describe('grants', () => {
    it('stops a revoked grant at once: the very next read, edit and list after the DELETE are refused', async () => {
      const base = recordsPath(wid, notes);
      const rec = await t.request('POST', base, {
        token: ann.token,
        body: { memberId: ann.id, fieldValues: { text: 'ann shares this' } },
      });
      expect(rec.status).toBe(201);
      for (let round = 0; round < 5; round++) {
        const grant = await t.request('POST', `/w/${wid}/record-grants`, {
          token: admin,
          body: { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'write' },
        });
        expect(grant.status).toBe(201);
        expect((await t.request('GET', `${base}/${rec.body.id}`, { token: bob.token })).status).toBe(200);
        const del = await t.request('DELETE', `/w/${wid}/record-grants/${grant.body.id}`, {
          token: ann.token,
        });
        expect(del.status).toBe(204);
        const [get, put, list] = await Promise.all([
          t.request('GET', `${base}/${rec.body.id}`, { token: bob.token }),
          t.request('PUT', `${base}/${rec.body.id}`, {
            token: bob.token,
            body: { fieldValues: { plain: `bob after revoke ${round}` } },
          }),
          t.request('GET', `${base}?memberId=${ann.id}`, { token: bob.token }),
        ]);
        expect({ round, get: get.status, put: put.status, total: list.body.total }).toEqual({
          round,
          get: 403,
          put: 403,
          total: 0,
        });
        expect(await t.eventsOf(put)).toEqual([]);
        // A second DELETE of the same grant names nothing.
        const again = await t.request('DELETE', `/w/${wid}/record-grants/${grant.body.id}`, {
          token: ann.token,
        });
        expect(again.status).toBe(404);
      }
    });

    it('lets a member without records:write share its records for read only: a write grant would let the grantee delete them', async () => {
      const base = recordsPath(wid, notes);
      const rec = await t.request('POST', base, {
        token: ann.token,
        body: { memberId: ann.id, fieldValues: { text: 'ann keeps this' } },
      });
      expect(rec.status).toBe(201);
      // Ann herself may not delete her record (rule 7: records:write)...
      expect((await t.request('DELETE', `${base}/${rec.body.id}`, { token: ann.token })).status).toBe(403);
      // ...so she cannot hand Bob a grant that would.
      const write = await t.request('POST', `/w/${wid}/record-grants`, {
        token: ann.token,
        body: { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'write' },
      });
      expect(write.status).toBe(403);
      expect(write.body.detail).toMatch(/^access: /);
      expect(await t.eventsOf(write)).toEqual([]);
      expect((await t.request('DELETE', `${base}/${rec.body.id}`, { token: bob.token })).status).toBe(403);
      expect((await t.request('GET', `${base}/${rec.body.id}`, { token: admin })).status).toBe(200);
      // Read she may share; and a key holding records:write shares its member's records for write.
      const read = await t.request('POST', `/w/${wid}/record-grants`, {
        token: ann.token,
        body: { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'read', dataTypeId: notes },
      });
      expect(read.status).toBe(201);
      const ownerKey = await keyWithScopes(t, admin, ['records:write']);
      const shared = await t.request('POST', `/w/${wid}/record-grants`, {
        token: ownerKey,
        body: { granteeMemberId: bob.id, ownerMemberId: adminMember, access: 'write' },
      });
      expect(shared.status).toBe(201);
      expect(
        (await t.request('DELETE', `/w/${wid}/record-grants/${shared.body.id}`, { token: admin })).status,
      ).toBe(204);
      expect(
        (await t.request('DELETE', `/w/${wid}/record-grants/${read.body.id}`, { token: ann.token })).status,
      ).toBe(204);
    });

    it('refuses a doubled grant (409, one event), a grant on a deleted type, to an archived member, and by a read-only key', async () => {
      const body = { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'read' };
      const [g1, g2] = await Promise.all(
        [1, 2].map(() => t.request('POST', `/w/${wid}/record-grants`, { token: admin, body })),
      );
      expect([g1.status, g2.status].sort()).toEqual([201, 409]);
      const loser = g1.status === 409 ? g1 : g2;
      expect(await t.eventsOf(loser)).toEqual([]);
      // A different access or a type-bound grant is another grant.
      expect(
        (
          await t.request('POST', `/w/${wid}/record-grants`, {
            token: admin,
            body: { ...body, access: 'write' },
          })
        ).status,
      ).toBe(201);

      const gone = await createDataType(t, wid, admin, { slug: 'gone_soon', fields: [] });
      expect((await t.request('DELETE', `/w/${wid}/data-types/${gone.id}`, { token: admin })).status).toBe(
        204,
      );
      const onDeleted = await t.request('POST', `/w/${wid}/record-grants`, {
        token: admin,
        body: { ...body, dataTypeId: gone.id },
      });
      expect(onDeleted.status).toBe(400);
      expect(onDeleted.body.detail).toMatch(/^dataTypeId: /);
      expect(await t.eventsOf(onDeleted)).toEqual([]);

      const carl = await signup(t, wid, admin, { email: 'carl5@example.com' });
      expect(
        (await t.request('DELETE', `/w/${wid}/members/${carl.member.id}`, { token: admin })).status,
      ).toBe(200);
      for (const b of [
        { granteeMemberId: carl.member.id, ownerMemberId: ann.id, access: 'read' },
        { granteeMemberId: ann.id, ownerMemberId: carl.member.id, access: 'read' },
      ]) {
        const res = await t.request('POST', `/w/${wid}/record-grants`, { token: admin, body: b });
        expect(res.status).toBe(400);
        expect(await t.eventsOf(res)).toEqual([]);
      }

      // An API key acting as the Manager's member with records:read only shares nothing, not even its own.
      const reader = await keyWithScopes(t, admin, ['records:read']);
      const byReader = await t.request('POST', `/w/${wid}/record-grants`, {
        token: reader,
        body: { granteeMemberId: bob.id, ownerMemberId: ann.id, access: 'read' },
      });
      expect(byReader.status).toBe(403);
      expect(await t.eventsOf(byReader)).toEqual([]);
    });

    it('answers the Location of a new grant with the grant, to those who may see it and to nobody else', async () => {
      const carl = await signup(t, wid, admin, { email: 'carl5b@example.com' });
      const made = await t.request('POST', `/w/${wid}/record-grants`, {
        token: ann.token,
        body: { granteeMemberId: carl.member.id, ownerMemberId: ann.id, access: 'read' },
      });
      expect(made.status).toBe(201);
      const location = made.headers.get('location')!.replace(/^\/api\/v2/, '');
      for (const token of [admin, ann.token, carl.token]) {
        const got = await t.request('GET', location, { token });
        expect(got.status).toBe(200);
        expect(got.body).toEqual(made.body);
      }
      for (const token of [bob.token, otherAdmin]) {
        const hidden = await t.request('GET', location, { token });
        expect([403, 404]).toContain(hidden.status);
        expect(JSON.stringify(hidden.body)).not.toContain(String(carl.member.id));
      }
      expect((await t.request('GET', location, { token: bob.token })).status).toBe(404);
      expect(
        (await t.request('GET', `/w/${otherWid}/record-grants/${made.body.id}`, { token: otherAdmin }))
          .status,
      ).toBe(404);
      expect((await t.request('DELETE', location, { token: carl.token })).status).toBe(204);
      expect((await t.request('GET', location, { token: admin })).status).toBe(404);
    });

    it('lists grants page by page within the workspace, and refuses bad paging', async () => {
      const list = await t.request('GET', `/w/${wid}/record-grants?pageSize=1&page=1`, { token: admin });
      expect(list.status).toBe(200);
      expect(list.body.items).toHaveLength(1);
      expect(list.body.total).toBeGreaterThanOrEqual(2);
      const beyond = await t.request('GET', `/w/${wid}/record-grants?pageSize=1&page=999`, { token: admin });
      expect(beyond.status).toBe(200);
      expect(beyond.body.items).toEqual([]);
      expect(beyond.body.total).toBe(list.body.total);
      for (const q of ['pageSize=0', 'pageSize=-1', 'pageSize=1.5', 'pageSize=1001', 'page=0', 'page=abc']) {
        const res = await t.request('GET', `/w/${wid}/record-grants?${q}`, { token: admin });
        expect({ q, status: res.status }).toEqual({ q, status: 400 });
      }
      const theirs = await t.request('GET', `/w/${otherWid}/record-grants`, { token: otherAdmin });
      expect(theirs.body.total).toBe(0);
      // A member sees the grants it gave or holds, not others'.
      const carlsView = await t.request('GET', `/w/${wid}/record-grants`, { token: bob.token });
      for (const g of carlsView.body.items as { granteeMemberId: number; ownerMemberId: number }[])
        expect([g.granteeMemberId, g.ownerMemberId]).toContain(bob.id);
    });
  });

  describe('bulk', () => {
    it('answers exactly the spec shape, never echoes a value, and refuses doubled, archived and foreign members per record', async () => {
      const base = recordsPath(wid, notes);
      const dora = await signup(t, wid, admin, { email: 'dora5@example.com' });
      expect(
        (await t.request('DELETE', `/w/${wid}/members/${dora.member.id}`, { token: admin })).status,
      ).toBe(200);
      const foreign = (await signup(t, otherWid, otherAdmin, { email: 'eve5@example.com' })).member.id;
      for (const upsert of [false, true]) {
        const phi = `PHI-${upsert}-secret`;
        const res = await t.request('POST', `${base}/bulk`, {
          token: admin,
          body: {
            upsert,
            records: [
              { externalId: `dup-${upsert}`, fieldValues: { text: `${phi} first` } },
              { externalId: `dup-${upsert}`, fieldValues: { text: `${phi} second` } },
              { externalId: ` dup-${upsert} `, fieldValues: { text: `${phi} third` } },
              { memberId: dora.member.id, fieldValues: { text: `${phi} archived` } },
              { memberId: foreign, fieldValues: { text: `${phi} foreign` } },
              { fieldValues: { score: `${phi}` } },
              { fieldValues: { nosuch: `${phi}` } },
              { fieldValues: { text: 42, plain: phi } },
            ],
          },
        });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual([
          'errors',
          'importedCount',
          'results',
          'success',
          'totalCount',
        ]);
        expect(res.body).toMatchObject({ success: false, totalCount: 8, importedCount: 1 });
        for (const r of res.body.results)
          expect(Object.keys(r).sort()).toEqual(['externalId', 'index', 'recordId', 'status']);
        for (const e of res.body.errors)
          expect(Object.keys(e).sort()).toEqual(['detail', 'externalId', 'index']);
        expect(res.body.results.map((r: { status: string }) => r.status)).toEqual([
          'created',
          'failed',
          'failed',
          'failed',
          'failed',
          'failed',
          'failed',
          'failed',
        ]);
        expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(res.body.errors[0].detail).toMatch(/^externalId: /);
        expect(res.body.errors[1].detail).toMatch(/^externalId: /);
        expect(res.body.errors[2].detail).toMatch(/^memberId: /);
        expect(res.body.errors[3].detail).toMatch(/^memberId: /);
        expect(res.body.errors[4].detail).toMatch(/^fieldValues\.score: /);
        expect(res.body.errors[5].detail).toMatch(/^fieldValues\.nosuch: /);
        expect(res.body.errors[6].detail).toMatch(/^fieldValues\.text: /);
        expect(JSON.stringify(res.body)).not.toContain('PHI');
        const events = await t.eventsOf(res);
        expect(events.map((e) => e.type)).toEqual(['DataRecordCreated']);
      }
    });

    it('keeps a profile type to one record per member through bulk, with and without upsert, and through upserts of other externalIds', async () => {
      const profile = await createDataType(t, wid, admin, {
        slug: 'profile5',
        isCollection: false,
        fields: [{ slug: 'dob', fieldType: 'date' }],
      });
      const base = recordsPath(wid, profile.id);
      const first = await t.request('POST', `/w/${wid}/data-types/${profile.id}/upsert/p-ann-1`, {
        token: admin,
        body: { memberId: ann.id, fieldValues: { dob: '1980-01-01' } },
      });
      expect(first.status).toBe(201);
      const second = await t.request('POST', `/w/${wid}/data-types/${profile.id}/upsert/p-ann-2`, {
        token: admin,
        body: { memberId: ann.id, fieldValues: { dob: '1981-01-01' } },
      });
      expect(second.status).toBe(409);
      expect(await t.eventsOf(second)).toEqual([]);
      const own = await t.request('POST', `/w/${wid}/data-types/${profile.id}/upsert/p-ann-3`, {
        token: ann.token,
        body: { memberId: ann.id, fieldValues: { dob: '1982-01-01' } },
      });
      expect(own.status).toBe(409);
      for (const upsert of [false, true]) {
        const records = Array.from({ length: 12 }, (_, i) => ({
          externalId: `p-bob-${upsert}-${i}`,
          memberId: i % 2 ? bob.id : ann.id,
          fieldValues: { dob: '1990-01-01' },
        }));
        const res = await t.request('POST', `${base}/bulk`, { token: admin, body: { upsert, records } });
        expect(res.status).toBe(200);
        const list = await t.request('GET', `${base}?pageSize=100`, { token: admin });
        const perMember = new Map<number, number>();
        for (const r of list.body.items as { memberId: number }[])
          perMember.set(r.memberId, (perMember.get(r.memberId) ?? 0) + 1);
        expect(Object.fromEntries(perMember)).toEqual({ [ann.id]: 1, [bob.id]: 1 });
        expect(res.body.importedCount).toBe(upsert ? 0 : 1);
      }
    });
  });

  describe('lists, search and upsert paths', () => {
    let base: string;
    let typeId: number;
    beforeAll(async () => {
      typeId = (
        await createDataType(t, wid, admin, {
          slug: 'lists5',
          isCollection: true,
          fields: [
            { slug: 'text', fieldType: 'text', shouldIndex: true },
            { slug: 'plain', fieldType: 'text' },
          ],
        })
      ).id;
      base = recordsPath(wid, typeId);
      for (const text of [
        '100% sure',
        '100 percent',
        'a_b',
        'axb',
        'back\\slash',
        'backslash',
        'x'.repeat(200),
      ]) {
        const res = await t.request('POST', base, {
          token: admin,
          body: { fieldValues: { text, plain: text } },
        });
        expect(res.status).toBe(201);
      }
    });

    it('matches %, _ and backslashes literally in search, and bounds its length', async () => {
      const found = async (search: string) => {
        const res = await t.request('GET', `${base}?search=${encodeURIComponent(search)}`, { token: admin });
        expect(res.status).toBe(200);
        return (res.body.items as { fieldValues: { text: string } }[]).map((r) => r.fieldValues.text).sort();
      };
      expect(await found('%')).toEqual(['100% sure']);
      expect(await found('0%')).toEqual(['100% sure']);
      expect(await found('_')).toEqual(['a_b']);
      expect(await found('a_b')).toEqual(['a_b']);
      expect(await found('\\')).toEqual(['back\\slash']);
      expect(await found('k\\s')).toEqual(['back\\slash']);
      expect(await found('\\%')).toEqual([]);
      expect(await found('x'.repeat(200))).toEqual(['x'.repeat(200)]);
      const long = await t.request('GET', `${base}?search=${'x'.repeat(201)}`, { token: admin });
      expect(long.status).toBe(400);
      expect(long.body.detail).toMatch(/search/);
      const huge = await t.request('GET', `${base}?search=${'%25'.repeat(3000)}`, { token: admin });
      expect(huge.status).toBe(400);
    });

    it('pages and sorts strictly: bad sort, page and page size are 400s naming them; a page past the end is empty', async () => {
      for (const q of [
        'sort=text',
        'sort=field.text',
        'sort=plain',
        'sort=',
        'sort=id&sort=-id',
        'pageSize=0',
        'pageSize=-5',
        'pageSize=2.5',
        'pageSize=1001',
        'page_size=0',
        'page_size=abc',
        'page=0',
        'page=-1',
        'page=1.5',
        'pageSize=2&pageSize=3',
        'field.plain=x',
        'field.nosuch=x',
        'field.text=a&field.text=b',
      ]) {
        const res = await t.request('GET', `${base}?${q}`, { token: admin });
        expect({ q, status: res.status }).toEqual({ q, status: 400 });
        expect(typeof res.body.detail).toBe('string');
      }
      const all = await t.request('GET', `${base}?sort=-createdAt&pageSize=3`, { token: admin });
      expect(all.body).toMatchObject({ total: 7, page: 1, pageSize: 3 });
      const ids = (await t.request('GET', `${base}?sort=-id&pageSize=1000`, { token: admin })).body.items.map(
        (r: { id: number }) => r.id,
      );
      expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
      const past = await t.request('GET', `${base}?page=3&page_size=5`, { token: admin });
      expect(past.body).toMatchObject({ items: [], total: 7, page: 3, pageSize: 5 });
      const alias = await t.request('GET', `${base}?page=2&page_size=5`, { token: admin });
      expect(alias.body.items).toHaveLength(2);
    });

    it('takes the upsert path parameter as sent: an encoded slash, a long id, unicode forms kept apart', async () => {
      const up = (id: string, text: string) =>
        t.request('POST', `/w/${wid}/data-types/${typeId}/upsert/${id}`, {
          token: admin,
          body: { fieldValues: { text } },
        });
      const slash = await up('a%2Fb', 'slash');
      expect(slash.status).toBe(201);
      expect(slash.body.externalId).toBe('a/b');
      const again = await up('a%2Fb', 'slash again');
      expect([again.status, again.body.id, again.body.wasCreated]).toEqual([200, slash.body.id, false]);
      const byList = await t.request('GET', `${base}?externalId=${encodeURIComponent('a/b')}`, {
        token: admin,
      });
      expect(byList.body.total).toBe(1);
      const dots = await up('..%2F..%2Fetc', 'dots');
      expect(dots.status).toBe(201);
      expect(dots.body.externalId).toBe('../../etc');
      // Every externalId POST and bulk take (up to 255 characters) can be upserted by its path,
      // however many characters its percent-encoding takes.
      for (const id of ['k'.repeat(255), '\u20ac'.repeat(255), `${'\u{1F600}'.repeat(127)}k`]) {
        const max = await up(encodeURIComponent(id), 'max');
        expect({ length: id.length, status: max.status }).toEqual({ length: id.length, status: 201 });
        expect(max.body.externalId).toBe(id);
        const twice = await up(encodeURIComponent(id), 'max again');
        expect([twice.status, twice.body.id]).toEqual([200, max.body.id]);
      }
      const over = await up('k'.repeat(256), 'over');
      expect(over.status).toBe(400);
      expect(over.body.detail).toMatch(/^path parameter externalId: /);
      expect(await t.eventsOf(over)).toEqual([]);
      const blank = await up('%20%20', 'blank');
      expect(blank.status).toBe(400);
      const nfc = await up(encodeURIComponent('caf\u00e9'), 'nfc');
      const nfd = await up(encodeURIComponent('cafe\u0301'), 'nfd');
      expect([nfc.status, nfd.status]).toEqual([201, 201]);
      expect(nfc.body.externalId).toBe('caf\u00e9');
      expect(nfd.body.externalId).toBe('cafe\u0301');
      const percent = await up('100%25', 'percent');
      expect(percent.status).toBe(201);
      expect(percent.body.externalId).toBe('100%');
      const bad = await up('%E0%A4%A', 'bad escape');
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
    });
  });

  describe('schema races, archived members and where values travel', () => {
    it('lets exactly one of concurrent data type PUTs pinned to one version win', async () => {
      const type = await createDataType(t, wid, admin, {
        slug: 'raced5',
        fields: [{ slug: 'a', fieldType: 'text' }],
      });
      const path = `/w/${wid}/data-types/${type.id}`;
      for (let round = 0; round < 4; round++) {
        const etag = (await t.request('GET', path, { token: admin })).headers.get('etag')!;
        const puts = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            t.request('PUT', path, {
              token: admin,
              headers: { 'if-match': etag },
              body: {
                name: `r${round}-${i}`,
                fields: [
                  { name: 'a', slug: 'a', fieldType: 'text' },
                  { name: `f${i}`, slug: `f${round}_${i}`, fieldType: 'text' },
                ],
              },
            }),
          ),
        );
        expect({ round, statuses: puts.map((p) => p.status).sort() }).toEqual({
          round,
          statuses: [200, 412, 412, 412],
        });
        const winner = puts.find((p) => p.status === 200)!;
        const now = await t.request('GET', path, { token: admin });
        expect(now.body.name).toBe(winner.body.name);
        expect(now.body.fields).toEqual(winner.body.fields);
        for (const p of puts.filter((x) => x.status === 412)) expect(await t.eventsOf(p)).toEqual([]);
      }
    });

    it('never leaves a type that stopped being a collection with records made as a collection (a PUT of isCollection racing creates)', async () => {
      let switched = 0;
      // Ten rounds, and more (up to 30) until a switch has stood at least once.
      for (let round = 0; round < 30 && (round < 10 || switched === 0); round++) {
        const type = await createDataType(t, wid, admin, {
          slug: `switch5_${round}`,
          isCollection: true,
          fields: [],
        });
        const base = recordsPath(wid, type.id);
        const posts = Array.from({ length: 6 }, () =>
          t.request('POST', base, { token: admin, body: { memberId: ann.id, fieldValues: {} } }),
        );
        const put = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
          token: admin,
          body: {
            isCollection: false,
            name: `renamed ${round}`,
            fields: [{ name: 'added', slug: 'added', fieldType: 'text' }],
          },
        });
        for (const p of await Promise.all(posts)) expect([201, 409]).toContain(p.status);
        expect([200, 409]).toContain(put.status);
        const now = await t.request('GET', `/w/${wid}/data-types/${type.id}`, { token: admin });
        const held = (await t.request('GET', `${base}?memberId=${ann.id}`, { token: admin })).body
          .total as number;
        if (put.status === 200) {
          switched++;
          // The switch stands only over no record: whatever the racing creates wrote is gone again.
          expect({ round, isCollection: now.body.isCollection, held }).toEqual({
            round,
            isCollection: false,
            held: 0,
          });
          const first = await t.request('POST', base, {
            token: admin,
            body: { memberId: ann.id, fieldValues: {} },
          });
          const second = await t.request('POST', base, {
            token: admin,
            body: { memberId: ann.id, fieldValues: {} },
          });
          expect([round, first.status, second.status]).toEqual([round, 201, 409]);
        } else {
          expect(put.body.detail).toMatch(/^isCollection: /);
          // Refused, it changed nothing: the rename and the added field are undone with the switch.
          expect({
            round,
            isCollection: now.body.isCollection,
            name: now.body.name,
            fields: now.body.fields,
          }).toEqual({
            round,
            isCollection: true,
            name: `switch5_${round}`,
            fields: [],
          });
        }
      }
      expect(switched).toBeGreaterThan(0);
    }, 120_000);

    it('never keeps a value of a field removed or retyped while the record was being created', async () => {
      for (let round = 0; round < 8; round++) {
        const type = await createDataType(t, wid, admin, {
          slug: `retype5_${round}`,
          isCollection: true,
          fields: [
            { slug: 'a', fieldType: 'text', shouldIndex: true },
            { slug: 'b', fieldType: 'text' },
          ],
        });
        const base = recordsPath(wid, type.id);
        const posts = Array.from({ length: 6 }, () =>
          t.request('POST', base, { token: admin, body: { fieldValues: { a: 'hello', b: 'kept?' } } }),
        );
        const put = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
          token: admin,
          body: { force: true, fields: [{ name: 'a', slug: 'a', fieldType: 'number', shouldIndex: true }] },
        });
        expect(put.status).toBe(200);
        // Created before the change, refused by it (400: no field b), or undone for meeting it (409).
        for (const p of await Promise.all(posts)) expect([201, 400, 409]).toContain(p.status);
        const list = await t.request('GET', `${base}?pageSize=100`, { token: admin });
        // Every record the list shows fits the schema as it now is: no `b`, no text in `a`.
        for (const r of list.body.items as { fieldValues: Record<string, unknown> }[])
          expect({ round, values: r.fieldValues }).toEqual({ round, values: {} });
        const byText = await t.request('GET', `${base}?search=hello`, { token: admin });
        expect(byText.body.total).toBe(0);
      }
    }, 120_000);

    it("keeps an archived member's records to those who may read them, and refuses new ones for it", async () => {
      const base = recordsPath(wid, notes);
      const fay = await signup(t, wid, admin, { email: 'fay5@example.com' });
      const rec = await t.request('POST', base, {
        token: fay.token,
        body: { memberId: fay.member.id, externalId: 'fay-1', fieldValues: { text: 'fay note' } },
      });
      expect(rec.status).toBe(201);
      expect((await t.request('DELETE', `/w/${wid}/members/${fay.member.id}`, { token: admin })).status).toBe(
        200,
      );
      // Its token no longer reaches anything.
      const own = await t.request('GET', `${base}/${rec.body.id}`, { token: fay.token });
      expect([401, 403]).toContain(own.status);
      // An admin still reads, changes and deletes the record; nobody creates a new one for the archived member.
      const put = await t.request('PUT', `${base}/${rec.body.id}`, {
        token: admin,
        body: { fieldValues: { plain: 'kept' } },
      });
      expect(put.status).toBe(200);
      await t.expectEvents(put, [
        { type: 'DataRecordUpdated', data: { member: null, changes: { plain: 'kept' } } },
      ]);
      for (const [path, body] of [
        [base, { memberId: fay.member.id, fieldValues: { text: 'x' } }],
        [
          `/w/${wid}/data-types/${notes}/upsert/fay-2`,
          { memberId: fay.member.id, fieldValues: { text: 'x' } },
        ],
      ] as const) {
        const res = await t.request('POST', path, { token: admin, body });
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect(res.body.detail).toMatch(/^memberId: /);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const up = await t.request('POST', `/w/${wid}/data-types/${notes}/upsert/fay-1`, {
        token: admin,
        body: { fieldValues: { plain: 'via upsert' } },
      });
      expect([up.status, up.body.memberId]).toEqual([200, fay.member.id]);
    });

    it("keeps values in the record's own stream: every event that carries one is in record-<id>, and updates carry only what changed", async () => {
      const marker = 'PHI-MARKER-5';
      const profile = await createDataType(t, wid, admin, {
        slug: 'values5',
        isCollection: false,
        fields: [
          { slug: 'a', fieldType: 'text', shouldIndex: true },
          { slug: 'b', fieldType: 'text' },
          { slug: 'c', fieldType: 'select', options: ['x', 'y'] },
        ],
      });
      const base = recordsPath(wid, profile.id);
      const gus = await t.request('POST', `/w/${wid}/create-signup`, {
        token: admin,
        body: {
          member: { email: 'gus5@example.com' },
          data: { values5: { values: { a: `${marker} a`, b: `${marker} b`, c: 'x' } } },
        },
      });
      expect(gus.status).toBe(201);
      const recordId = (await t.request('GET', `${base}?memberId=${gus.body.member.id}`, { token: admin }))
        .body.items[0].id as number;
      const put = await t.request('PUT', `${base}/${recordId}`, {
        token: admin,
        body: { fieldValues: { b: `${marker} b2`, a: `${marker} a`, c: null } },
      });
      expect(put.status).toBe(200);
      const [updated] = (await t.expectEvents(put, [{ type: 'DataRecordUpdated' }])) as {
        data: Record<string, object>;
      }[];
      expect(updated.data).toMatchObject({
        changes: { b: `${marker} b2`, c: null },
        previous: { b: `${marker} b`, c: 'x' },
      });
      expect(Object.keys(updated.data.changes as object).sort()).toEqual(['b', 'c']);
      expect(Object.keys(updated.data.previous as object).sort()).toEqual(['b', 'c']);
      const same = await t.request('PUT', `${base}/${recordId}`, {
        token: admin,
        body: { fieldValues: { b: `${marker} b2` } },
      });
      expect(same.status).toBe(200);
      expect(await t.eventsOf(same)).toEqual([]);
      const bulk = await t.request('POST', `${base}/bulk`, {
        token: admin,
        body: {
          upsert: true,
          records: Array.from({ length: 10 }, (_, i) => ({
            externalId: `v5-${i}`,
            fieldValues: { a: `${marker} bulk ${i}` },
          })),
        },
      });
      expect(bulk.body.importedCount).toBe(10);
      const narrowed = await t.request('PUT', `/w/${wid}/data-types/${profile.id}`, {
        token: admin,
        body: {
          force: true,
          fields: [
            { name: 'a', slug: 'a', fieldType: 'number' },
            { name: 'b', slug: 'b', fieldType: 'text' },
          ],
        },
      });
      expect(narrowed.status).toBe(200);
      const del = await t.request('DELETE', `${base}/${recordId}`, { token: admin });
      expect(del.status).toBe(204);
      const [deleted] = await t.expectEvents(del, [{ type: 'DataRecordDeleted' }]);
      expect(JSON.stringify(deleted.data)).not.toContain(marker);
      const gone = await t.request('DELETE', `/w/${wid}/data-types/${profile.id}?force=true`, {
        token: admin,
      });
      expect(gone.status).toBe(204);
      for (const e of await t.eventsOf(gone)) expect(JSON.stringify(e.data)).not.toContain(marker);
      // Every stored event of the workspace: those carrying the marker are record events of their own record.
      const all = await t.request('GET', `/w/${wid}/events?pageSize=1000`, { token: admin });
      expect(all.status).toBe(200);
      const carrying = (
        all.body.items as {
          streamName: string;
          type: string;
          data: { recordId?: number };
          metadata: unknown;
        }[]
      ).filter((e) => JSON.stringify(e.data).includes(marker) || JSON.stringify(e.metadata).includes(marker));
      expect(carrying.length).toBeGreaterThan(10);
      for (const e of carrying) {
        expect(e.streamName).toBe(`record-${e.data.recordId}`);
        expect(['DataRecordCreated', 'DataRecordUpdated']).toContain(e.type);
        expect(JSON.stringify(e.metadata)).not.toContain(marker);
      }
    });
  });

  it("shows a record's values in the event history only to records:admin, not to workspace:admin alone", async () => {
    const secret = await createDataType(t, wid, admin, {
      slug: 'history5',
      visibility: 'admin_only',
      fields: [{ slug: 'dx', fieldType: 'text' }],
    });
    const base = recordsPath(wid, secret.id);
    const rec = await t.request('POST', base, {
      token: admin,
      body: { fieldValues: { dx: 'history secret one' } },
    });
    expect(rec.status).toBe(201);
    const put = await t.request('PUT', `${base}/${rec.body.id}`, {
      token: admin,
      body: { fieldValues: { dx: 'history secret two' } },
    });
    expect(put.status).toBe(200);
    const stream = `record-${rec.body.id}`;
    const auditor = await keyWithScopes(t, admin, ['workspace:admin']);
    // The auditor does not see the type's records at all...
    expect((await t.request('GET', `${base}/${rec.body.id}`, { token: auditor })).status).toBe(404);
    // ...nor their values through the history, which still shows that and when they changed.
    for (const path of [`/w/${wid}/events?stream=${stream}`, `/w/${wid}/events/streams/${stream}`]) {
      const res = await t.request('GET', path, { token: auditor });
      expect(res.status).toBe(200);
      expect(res.body.items.map((e: { type: string }) => e.type).sort()).toEqual([
        'DataRecordCreated',
        'DataRecordUpdated',
      ]);
      expect(JSON.stringify(res.body)).not.toContain('history secret');
      for (const e of res.body.items as { data: Record<string, unknown> }[]) {
        expect(e.data).toMatchObject({ recordId: rec.body.id, dataTypeId: secret.id });
        expect(Object.keys(e.data)).not.toEqual(expect.arrayContaining(['fieldValues']));
      }
    }
    const all = await t.request('GET', `/w/${wid}/events?pageSize=1000`, { token: auditor });
    expect(JSON.stringify(all.body)).not.toContain('history secret');
    // With records:admin beside it, the history is whole.
    const both = await keyWithScopes(t, admin, ['workspace:admin', 'records:admin']);
    for (const token of [both, admin]) {
      const res = await t.request('GET', `/w/${wid}/events/streams/${stream}`, { token });
      expect(res.body.items[0].data.fieldValues).toEqual({ dx: 'history secret one' });
      expect(res.body.items[1].data).toMatchObject({
        changes: { dx: 'history secret two' },
        previous: { dx: 'history secret one' },
      });
    }
  });
});
