import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { createDataType, recordsPath } from '../support/records-fixtures';

type Values = Record<string, unknown>;
type Field = { slug: string; fieldType: string; shouldIndex?: boolean; options?: string[] };

/** Whether a value is one a field of this type may hold (the types these rounds use). */
function fits(field: Field | undefined, value: unknown): boolean {
  if (!field) return false;
  if (field.fieldType === 'number') return typeof value === 'number';
  if (field.fieldType === 'select') return (field.options ?? []).includes(value as string);
  return typeof value === 'string';
}

/**
 * Record updates (PUT, upsert's update, bulk import with upsert updating existing records)
 * racing schema changes (a data type PUT removing or retyping a field, with and without
 * force): whatever the timing, no record keeps a value its schema refuses, a write that
 * answered 2xx keeps its values unless a forced change dropped them later, and a write that
 * answered 409 changed nothing.
 */
describe('attack: records, seventh round: updates racing schema changes (e2e)', () => {
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

  const ROUNDS = 15;
  const RECORDS = 12;

  /** The schema changes the rounds cycle through: b removed (without and with force), b retyped (force). */
  const changes: { force: boolean; fields: Field[] }[] = [
    { force: false, fields: [{ slug: 'a', fieldType: 'text', shouldIndex: true }] },
    {
      force: true,
      fields: [
        { slug: 'a', fieldType: 'text', shouldIndex: true },
        { slug: 'b', fieldType: 'number' },
      ],
    },
    { force: true, fields: [{ slug: 'a', fieldType: 'text', shouldIndex: true }] },
    {
      force: true,
      fields: [
        { slug: 'a', fieldType: 'text', shouldIndex: true },
        { slug: 'b', fieldType: 'select', options: ['other'] },
      ],
    },
  ];

  it('never keeps a value of a field removed, retyped or narrowed while a record PUT, upsert or bulk upsert wrote it', async () => {
    let undone = 0;
    let kept = 0;
    let checkedEvents = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const change = changes[round % changes.length];
      const type = await createDataType(t, wid, admin, {
        slug: `race7_${round}`,
        isCollection: true,
        fields: [
          { slug: 'a', fieldType: 'text', shouldIndex: true },
          {
            slug: 'b',
            fieldType: change.fields[1]?.fieldType === 'select' ? 'select' : 'text',
            ...(change.fields[1]?.fieldType === 'select' ? { options: ['old', 'new'] } : {}),
          },
        ],
      });
      const base = recordsPath(wid, type.id);
      const ext = (i: number) => `r${round}-${i}`;
      const seeded = await t.request('POST', `${base}/bulk`, {
        token: admin,
        body: {
          records: Array.from({ length: RECORDS }, (_, i) => ({
            externalId: ext(i),
            fieldValues: { a: 'seed' },
          })),
        },
      });
      expect(seeded.body.importedCount).toBe(RECORDS);
      const ids = (seeded.body.results as { recordId: number }[]).map((r) => r.recordId);
      const bValue = change.fields[1]?.fieldType === 'select' ? 'new' : 'written';
      const wrote = (i: number): Values => ({ a: `a-${ext(i)}`, b: bValue });

      // Records 0-3 by PUT, 4-7 by upsert, 8-11 by one bulk import with upsert; each record by one write only.
      const puts = [0, 1, 2, 3].map((i) =>
        t.request('PUT', `${base}/${ids[i]}`, { token: admin, body: { fieldValues: wrote(i) } }),
      );
      const upserts = [4, 5, 6, 7].map((i) =>
        t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/${ext(i)}`, {
          token: admin,
          body: { fieldValues: wrote(i) },
        }),
      );
      const bulk = t.request('POST', `${base}/bulk`, {
        token: admin,
        body: {
          upsert: true,
          records: [8, 9, 10, 11].map((i) => ({ externalId: ext(i), fieldValues: wrote(i) })),
        },
      });
      // The schema change starts with the writes or a little after, varying by round.
      await new Promise((resolve) => setTimeout(resolve, (round * 7) % 40));
      const schema = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
        token: admin,
        body: { force: change.force, fields: change.fields.map((f) => ({ name: f.slug, ...f })) },
      });
      expect({ round, ok: [200, 409].includes(schema.status) }).toEqual({ round, ok: true });

      // What each record write answered: ok (2xx), or refused without having changed anything.
      const outcome = new Map<number, { ok: boolean; response?: TestResponse; detail?: string }>();
      for (const [k, res] of (await Promise.all(puts)).entries()) {
        expect({ round, status: res.status, ok: [200, 400, 409].includes(res.status) }).toEqual({
          round,
          status: res.status,
          ok: true,
        });
        outcome.set(k, { ok: res.status === 200, response: res, detail: res.body?.detail as string });
      }
      for (const [k, res] of (await Promise.all(upserts)).entries()) {
        expect({ round, status: res.status, ok: [200, 400, 409].includes(res.status) }).toEqual({
          round,
          status: res.status,
          ok: true,
        });
        outcome.set(4 + k, { ok: res.status === 200, detail: res.body?.detail as string });
      }
      const imported = await bulk;
      expect(imported.status).toBe(200);
      for (const [k, r] of (imported.body.results as { status: string }[]).entries()) {
        expect(['updated', 'failed']).toContain(r.status);
        outcome.set(8 + k, { ok: r.status === 'updated' });
      }

      const typeNow = await t.request('GET', `/w/${wid}/data-types/${type.id}`, { token: admin });
      const fields = new Map((typeNow.body.fields as Field[]).map((f) => [f.slug, f]));
      const list = await t.request('GET', `${base}?pageSize=100`, { token: admin });
      expect(list.body.total).toBe(RECORDS);
      const byId = new Map(
        (list.body.items as { id: number; fieldValues: Values }[]).map((r) => [r.id, r.fieldValues]),
      );
      for (let i = 0; i < RECORDS; i++) {
        const values = byId.get(ids[i])!;
        // Every value fits the schema as it now is.
        for (const [slug, value] of Object.entries(values))
          expect({ round, i, slug, fits: fits(fields.get(slug), value) }).toEqual({
            round,
            i,
            slug,
            fits: true,
          });
        const o = outcome.get(i)!;
        if (o.ok) {
          kept++;
          // A 2xx write's values stay, unless a forced schema change dropped them afterwards.
          expect({ round, i, a: values.a }).toEqual({ round, i, a: wrote(i).a });
          const dropped = schema.status === 200 && change.force;
          if (!dropped) expect({ round, i, b: values.b }).toEqual({ round, i, b: bValue });
        } else {
          // A refused write changed nothing.
          expect({ round, i, values }).toEqual({ round, i, values: { a: 'seed' } });
        }
        if (o.response?.status === 409 && /^fieldValues: /.test(o.detail ?? '')) {
          undone++;
          if (checkedEvents++ < 3) {
            // The auditor's and webhooks' view: the update, then its undo by the same request.
            const events = (await t.eventsOf(o.response)) as StoredEvent[];
            expect(events.map((e) => [e.type, e.streamName])).toEqual([
              ['DataRecordUpdated', `record-${ids[i]}`],
              ['DataRecordUpdated', `record-${ids[i]}`],
            ]);
            const [made, undo] = events.map(
              (e) => e.data as { changes: Values; previous: Values; fieldValues: Values },
            );
            expect(made.changes).toEqual(wrote(i));
            expect(undo.previous).toEqual(wrote(i));
            expect(undo.changes).toEqual({ a: 'seed', b: null });
            expect(undo.fieldValues).toEqual({ a: 'seed' });
          }
        }
      }
      const search = await t.request('GET', `${base}?search=${encodeURIComponent(`a-${ext(0)}`)}`, {
        token: admin,
      });
      expect(search.body.total).toBe(outcome.get(0)!.ok ? 1 : 0);
    }
    // Not asserted (timing decides), only reported: how often a write met a change and undid itself.
    process.stdout.write(
      `attack-records-7: ${undone} record PUT(s) undone, ${kept} write(s) kept over ${ROUNDS} rounds\n`,
    );
  }, 300_000);
});
