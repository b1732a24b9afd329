import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { PNG_1X1, uploadFile } from '../support/file-uploads';
import { keyWithScopes } from '../support/identity-fixtures';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

/**
 * Work, calendars and files met as a hostile and a careless client, fifth pass: what the
 * earlier passes (work-calendars-attack, files, messaging-workflows) did not reach. Each
 * assertion states the correct behaviour.
 */
describe('work, calendars and files under attack, fifth pass (e2e)', () => {
  let t: TestApp;
  let dir: string;
  let a: { workspaceId: string; apiKey: string; memberId: number };
  let w: string;
  let agent: number;
  let flow: { id: number; uuid: string };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'attack-work-5-'));
    t = await startTestApp({ env: { FILE_STORAGE_DIR: dir, FILE_MAX_BYTES: String(1024 * 1024) } });
    a = await t.bootstrap('Clinic');
    w = `/w/${a.workspaceId}`;
    agent = await agentMember(t, a.workspaceId, a.apiKey);
    flow = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Intake', agentId: agent });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const req = (method: string, p: string, token: string, body?: unknown, headers?: Record<string, string>) =>
    t.request(method, p, { token, body, headers });
  const expectDetail = (res: TestResponse, status: number, field?: string) => {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { detail: expect.any(String) },
    });
    if (field) expect(res.body.detail).toContain(field);
  };
  const total = async (p: string) => (await req('GET', `${p}?pageSize=1000`, a.apiKey)).body.total as number;

  describe('every path that starts a workflow applies the same rules', () => {
    it('a key without assignments:write starts none for its own member through a chat either (403, no chat, no assignment)', async () => {
      const chatsOnly = await keyWithScopes(t, a.apiKey, ['chats:write']);
      // The direct route refuses it: the credential does not name assignments:write.
      const direct = await req('POST', `${w}/assignments`, chatsOnly, { workflowId: flow.id });
      expectDetail(direct, 403, 'assignments:write');
      const [chatsBefore, runsBefore] = [await total(`${w}/chats`), await total(`${w}/assignments`)];
      // A chat of its own member with workflowId would start the same assignment: refused alike.
      const viaChat = await req('POST', `${w}/chats`, chatsOnly, {
        channel: 'web-chat',
        workflowId: flow.id,
      });
      expectDetail(viaChat, 403, 'assignments:write');
      await t.expectEvents(viaChat, []);
      // The same key may still open a chat of its own without a workflow.
      const plain = await req('POST', `${w}/chats`, chatsOnly, { channel: 'web-chat' });
      expect(plain.status).toBe(201);
      expect(await total(`${w}/chats`)).toBe(chatsBefore + 1);
      expect(await total(`${w}/assignments`)).toBe(runsBefore);

      // With assignments:write in the credential as well, the chat starts it.
      const both = await keyWithScopes(t, a.apiKey, ['chats:write', 'assignments:write']);
      const ok = await req('POST', `${w}/chats`, both, { channel: 'web-chat', workflowId: flow.id });
      expect(ok.status).toBe(201);
      await t.expectEvents(ok, [{ type: 'AssignmentStarted' }, { type: 'ChatCreated' }]);
      // A member token is the member itself: it starts an ungated workflow for itself by either path.
      const ann = await person(t, a.workspaceId, a.apiKey);
      const own = await req('POST', `${w}/chats`, ann.token, { channel: 'web-chat', workflowId: flow.id });
      expect(own.status).toBe(201);
      expect((await req('GET', `${w}/assignments/${own.body.assignmentId}`, a.apiKey)).body.memberId).toBe(
        ann.memberId,
      );
    });

    it('pinned to one version, ten parallel ends of one assignment: one 200, nine 412, one end event', async () => {
      const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: flow.id });
      const etag = run.headers.get('etag')!;
      const racing = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          req(
            'PUT',
            `${w}/assignments/${run.body.id}`,
            a.apiKey,
            { status: i % 2 ? 'completed' : 'failed' },
            { 'if-match': etag },
          ),
        ),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(412)]);
      for (const r of racing.filter((x) => x.status === 412)) await t.expectEvents(r, []);
      const stream = await t.store.readStream(`assignment-${run.body.id}`);
      expect(stream.map((e) => e.type)).toHaveLength(2);
      // Pinned to the version before the end, the same end again is still 412: the tag is stale.
      expectDetail(
        await req(
          'PUT',
          `${w}/assignments/${run.body.id}`,
          a.apiKey,
          { status: 'completed' },
          { 'if-match': etag },
        ),
        412,
        'If-Match',
      );
    });
  });

  describe('date-times whose instant falls outside the years 0001-9999 in UTC', () => {
    // Valid ISO 8601 as written, but the instant in UTC is year 0 or year 10000: answers gave
    // them back as `0000-12-31T23:00:00.000Z` / `+010000-01-01T14:59:59.000Z`, which the API
    // itself refuses, so a task or event could not be sent back as read.
    const early = '0001-01-01T00:00:00+01:00';
    const late = '9999-12-31T23:59:59-15:00';

    it('are 400 naming the field in task, event and assignment bodies and in list filters, appending nothing', async () => {
      const ann = await person(t, a.workspaceId, a.apiKey);
      const annCal = await req('POST', `${w}/calendars`, ann.token, { name: 'Ann' });
      const task = await req('POST', `${w}/tasks`, a.apiKey, { name: 'Dated' });
      const ev = await req('POST', `${w}/calendar-events`, ann.token, {
        title: 'Dated',
        startTime: '2026-01-01T09:00:00Z',
        calendarId: annCal.body.id,
      });
      const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: flow.id });
      for (const when of [early, late]) {
        const cases: [string, string, string, Record<string, unknown>, string][] = [
          ['POST', `${w}/tasks`, a.apiKey, { name: 'X', dueAt: when }, 'dueAt'],
          ['PUT', `${w}/tasks/${task.body.id}`, a.apiKey, { dueAt: when }, 'dueAt'],
          ['POST', `${w}/calendar-events`, a.apiKey, { title: 'X', startTime: when }, 'startTime'],
          [
            'POST',
            `${w}/calendar-events`,
            ann.token,
            { title: 'X', startTime: '2026-01-01T09:00:00Z', endTime: when, calendarId: annCal.body.id },
            'endTime',
          ],
          ['PUT', `${w}/calendar-events/${ev.body.id}`, ann.token, { startTime: when }, 'startTime'],
          [
            'PUT',
            `${w}/assignments/${run.body.id}`,
            a.apiKey,
            { status: 'completed', completedAt: when },
            'completedAt',
          ],
        ];
        for (const [method, p, token, body, field] of cases) {
          const res = await req(method, p, token, body);
          expect({ method, p, body, status: res.status }).toEqual({ method, p, body, status: 400 });
          expect(res.body.detail).toContain(field);
          await t.expectEvents(res, []);
        }
        for (const list of ['tasks', 'assignments', 'calendar-events', 'files', 'workflows'])
          for (const side of ['startTime', 'endTime'])
            expectDetail(
              await req('GET', `${w}/${list}?${side}=${encodeURIComponent(when)}`, a.apiKey),
              400,
              side,
            );
      }
      expect((await req('GET', `${w}/assignments/${run.body.id}`, a.apiKey)).body.status).toBe('active');
    });

    it('keeps the widest instants that are in range, and takes them back unchanged as read', async () => {
      const first = '0001-01-01T00:00:00Z';
      const last = '9999-12-31T23:59:59.999Z';
      const task = await req('POST', `${w}/tasks`, a.apiKey, { name: 'Far due', dueAt: last });
      expect(task.status).toBe(201);
      expect(task.body.dueAt).toBe('9999-12-31T23:59:59.999Z');
      const got = await req('GET', `${w}/tasks/${task.body.id}`, a.apiKey);
      const back = await req('PUT', `${w}/tasks/${task.body.id}`, a.apiKey, { dueAt: got.body.dueAt });
      expect(back.status).toBe(200);
      await t.expectEvents(back, []);

      // One event over the whole range, found by any window and sent back as read.
      const span = await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Forever',
        startTime: first,
        endTime: last,
      });
      expect(span.status).toBe(201);
      expect([span.body.startTime, span.body.endTime]).toEqual([
        '0001-01-01T00:00:00.000Z',
        '9999-12-31T23:59:59.999Z',
      ]);
      for (const q of [
        `startTime=${first}&endTime=0001-01-01T00:00:00.000001Z`,
        'startTime=2026-06-01T00:00:00Z&endTime=2026-06-01T00:00:01Z',
        'startTime=9999-12-31T23:59:59Z',
      ]) {
        const listed = await req('GET', `${w}/calendar-events?search=Forever&${q}`, a.apiKey);
        expect({ q, ids: listed.body.items.map((e: { id: number }) => e.id) }).toEqual({
          q,
          ids: [span.body.id],
        });
      }
      const read = await req('GET', `${w}/calendar-events/${span.body.id}`, a.apiKey);
      const same = await req('PUT', `${w}/calendar-events/${span.body.id}`, a.apiKey, {
        startTime: read.body.startTime,
        endTime: read.body.endTime,
      });
      expect(same.status).toBe(200);
      await t.expectEvents(same, []);
    });
  });

  describe('pages at the far end', () => {
    it('the last page a list serves, at the largest page size, is an empty page, not a 500', async () => {
      for (const list of ['workflows', 'tasks', 'assignments', 'calendars', 'calendar-events', 'files']) {
        const res = await req('GET', `${w}/${list}?page=1000000000&pageSize=1000&search=x`, a.apiKey);
        expect({ list, status: res.status, items: res.body.items, page: res.body.page }).toEqual({
          list,
          status: 200,
          items: [],
          page: 1_000_000_000,
        });
        expect((await req('GET', `${w}/${list}?page=1000000001`, a.apiKey)).status).toBe(400);
      }
    });
  });

  describe('list windows on creation times', () => {
    it('take startTime inclusive and endTime exclusive, to the millisecond, in tasks, assignments and files', async () => {
      const task = await req('POST', `${w}/tasks`, a.apiKey, { name: 'Edge task' });
      const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: flow.id });
      const file = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { name: 'edge.png' });
      for (const [list, id, at] of [
        ['tasks', task.body.id, task.body.createdAt],
        ['assignments', run.body.id, run.body.startedAt],
        ['files', file.body.id, file.body.createdAt],
      ] as [string, number, string][]) {
        const next = new Date(Date.parse(at) + 1).toISOString();
        const ids = async (q: string) =>
          (await req('GET', `${w}/${list}?pageSize=1000&${q}`, a.apiKey)).body.items.map(
            (x: { id: number }) => x.id,
          );
        expect({ list, from: await ids(`startTime=${at}`) }).toEqual({
          list,
          from: expect.arrayContaining([id]),
        });
        expect({ list, before: await ids(`endTime=${at}`) }).toEqual({
          list,
          before: expect.not.arrayContaining([id]),
        });
        expect({ list, exact: await ids(`startTime=${at}&endTime=${next}`) }).toEqual({ list, exact: [id] });
        expect({ list, after: await ids(`startTime=${next}`) }).toEqual({
          list,
          after: expect.not.arrayContaining([id]),
        });
      }
    });
  });

  describe('files: names that lie about themselves', () => {
    const postRaw = async (body: string) => {
      const res = await fetch(`${t.baseUrl}${w}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'multipart/form-data; boundary=BND' },
        body: Buffer.from(body, 'utf8'),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const disposition = async (id: unknown) => {
      const res = await fetch(`${t.baseUrl}${w}/files/${String(id)}/content`, {
        headers: { authorization: `Bearer ${a.apiKey}` },
      });
      await res.arrayBuffer();
      return res.headers.get('content-disposition');
    };

    it('drop bidirectional overrides, so an .exe does not show as a .pdf', async () => {
      const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, {
        name: 'invoice\u202Efdp.exe',
      });
      expect(up.status).toBe(201);
      expect(up.body.name).toBe('invoicefdp.exe');
      const [event] = await t.expectEvents(up, [{ type: 'FileUploaded' }]);
      expect((event.data as { name: string }).name).toBe('invoicefdp.exe');
      expect(await disposition(up.body.id)).toBe(
        `attachment; filename="invoicefdp.exe"; filename*=UTF-8''invoicefdp.exe`,
      );
      // Right-to-left text itself is kept.
      const hebrew = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { name: 'שלום.png' });
      expect(hebrew.body.name).toBe('שלום.png');
    });

    it('cannot add a header or a second filename to the download through quotes, semicolons or line breaks', async () => {
      const quoted = await postRaw(
        '--BND\r\nContent-Disposition: form-data; name="file"; filename="a\\"; filename=evil.exe; x=\\".txt"\r\n\r\nhello\r\n--BND--\r\n',
      );
      expect(quoted.status).toBe(201);
      expect(quoted.body.name).toBe('a"; filename=evil.exe; x=".txt');
      expect(await disposition(quoted.body.id)).toBe(
        `attachment; filename="a_; filename=evil.exe; x=_.txt"; filename*=UTF-8''a%22%3B%20filename%3Devil.exe%3B%20x%3D%22.txt`,
      );
      for (const name of ['evil\r\nX-Injected: 1.txt', 'evil\nSet-Cookie: a=b.txt', 'evil\r.txt']) {
        const res = await postRaw(
          `--BND\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\nhello\r\n--BND--\r\n`,
        );
        // Refused as malformed, or kept without the break: never a header of its own on the way out.
        if (res.status === 201) {
          expect(res.body.name).not.toMatch(/[\r\n]/);
          const header = await disposition(res.body.id);
          expect(header).not.toMatch(/[\r\n]/);
          expect(header).toMatch(/^attachment; filename="[^"]*"; filename\*=UTF-8''[^"\s;]*$/);
        } else {
          expect({ name, status: res.status }).toEqual({ name, status: 400 });
        }
      }
    });
  });

  describe('files: forms a careless client builds', () => {
    it('more form fields than the parser takes is 413 naming the body, not the parser\'s "reach fields limit", and keeps nothing', async () => {
      const before = await total(`${w}/files`);
      const fields = Array.from(
        { length: 25 },
        (_, i) => `--BND\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`,
      ).join('');
      const res = await fetch(`${t.baseUrl}${w}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'multipart/form-data; boundary=BND' },
        body: `${fields}--BND\r\nContent-Disposition: form-data; name="file"; filename="x.txt"\r\n\r\nhello\r\n--BND--\r\n`,
      });
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 413,
        body: { detail: 'body: at most 20 form fields may come with the file' },
      });
      expect(await total(`${w}/files`)).toBe(before);
      // Twenty are fine.
      const ok = await fetch(`${t.baseUrl}${w}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'multipart/form-data; boundary=BND' },
        body: `${fields.split('--BND').slice(0, 21).join('--BND')}--BND\r\nContent-Disposition: form-data; name="file"; filename="x.txt"\r\n\r\nhello\r\n--BND--\r\n`,
      });
      expect(ok.status).toBe(201);
    });
  });

  describe('files: one file per upload', () => {
    const form = (parts: string) =>
      fetch(`${t.baseUrl}${w}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'multipart/form-data; boundary=BND' },
        body: parts,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const filePart = (name: string, content: string, field = 'file') =>
      `--BND\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\n\r\n${content}\r\n`;
    const staged = async () => (await readdir(path.join(dir, 'staging')).catch(() => [])).length;

    it('a second file in the form is 400 naming file, and neither is kept (was 201 for the first, the second dropped unsaid)', async () => {
      const before = await total(`${w}/files`);
      for (const second of [filePart('two.txt', 'second'), filePart('two.txt', 'second', 'other')]) {
        const res = await form(`${filePart('one.txt', 'first')}${second}--BND--\r\n`);
        expect(res).toEqual({
          status: 400,
          body: { detail: 'file: one file per upload; send each file in a request of its own' },
        });
      }
      expect(await total(`${w}/files`)).toBe(before);
      expect(await staged()).toBe(0);
      // Fields after the file are read and dropped, as before it.
      const withField = await form(
        `${filePart('one.txt', 'first')}--BND\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n--BND--\r\n`,
      );
      expect(withField.status).toBe(201);
      expect(withField.body.name).toBe('one.txt');
      expect(await total(`${w}/files`)).toBe(before + 1);
    });
  });

  describe('files: a form sent without choosing a file', () => {
    it('is 400 file: required (was an empty file named "file"); an empty file with a name is kept', async () => {
      const before = await total(`${w}/files`);
      const send = (filename: string) =>
        fetch(`${t.baseUrl}${w}/files`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${a.apiKey}`,
            'content-type': 'multipart/form-data; boundary=BND',
          },
          // What a browser sends for <input type=file> left empty.
          body: `--BND\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--BND--\r\n`,
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
      const none = await send('');
      expect(none).toEqual({
        status: 400,
        body: { detail: 'file: required; the part named file is empty and names no file' },
      });
      expect(await total(`${w}/files`)).toBe(before);
      expect((await readdir(path.join(dir, 'staging')).catch(() => [])).length).toBe(0);
      const named = await send('empty.txt');
      expect(named.status).toBe(201);
      expect(named.body).toMatchObject({ name: 'empty.txt', size: 0 });
    });
  });

  describe('files: a download racing a delete', () => {
    it('is 404 once the delete is recorded, even while the read model still lists the file (was 500)', async () => {
      const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { name: 'doomed.png' });
      const id = up.body.id as number;
      const [uploaded] = await t.eventsOf(up);
      const { storageKey } = uploaded.data as { storageKey: string };
      // Hold the read-model row, so the projection cannot apply FileDeleted yet: the state a
      // reader meets between the delete's append and its projection.
      const holder = new Client({ connectionString: t.database.url });
      await holder.connect();
      let deleting: Promise<TestResponse> | undefined;
      let download: { status: number; body: unknown } | undefined;
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM files WHERE id = $1 FOR UPDATE', [id]);
        deleting = req('DELETE', `${w}/files/${id}`, a.apiKey);
        // Once the delete has recorded itself and removed the bytes, a download.
        const blob = path.join(dir, ...storageKey.split('/'));
        for (let i = 0; i < 100 && (await readdir(path.dirname(blob))).includes(path.basename(blob)); i++)
          await new Promise((r) => setTimeout(r, 20));
        const res = await fetch(`${t.baseUrl}${w}/files/${id}/content`, {
          headers: { authorization: `Bearer ${a.apiKey}` },
        });
        download = { status: res.status, body: await res.json() };
        await holder.query('COMMIT');
      } finally {
        await holder.end();
      }
      expect((await deleting).status).toBe(204);
      expect((await t.store.readStream(`file-${id}`)).map((e) => e.type)).toEqual([
        'FileUploaded',
        'FileDeleted',
      ]);
      expect(download).toEqual({ status: 404, body: { detail: 'File not found' } });
      expect((await req('GET', `${w}/files/${id}`, a.apiKey)).status).toBe(404);
    });
  });

  describe('files: a Content-Length that lies', () => {
    it('shorter than the body: 400, nothing recorded and nothing staged', async () => {
      const before = await total(`${w}/files`);
      const u = new URL(t.baseUrl);
      const body = `--BND\r\nContent-Disposition: form-data; name="file"; filename="lie.txt"\r\n\r\n${'x'.repeat(5000)}\r\n--BND--\r\n`;
      const head =
        `POST ${u.pathname}${w}/files HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${a.apiKey}\r\n` +
        'Content-Type: multipart/form-data; boundary=BND\r\nContent-Length: 200\r\n\r\n';
      const answer = await new Promise<string>((resolve) => {
        let out = '';
        const socket = connect(Number(u.port), u.hostname, () => socket.end(head + body));
        socket.on('data', (c) => (out += c.toString('latin1')));
        socket.on('close', () => resolve(out));
        socket.on('error', () => resolve(out));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).not.toMatch(/ 201 Created/);
      // The socket's 400 may come before the cut-off upload's own handler has discarded its bytes.
      const staged = () => readdir(path.join(dir, 'staging')).catch(() => []);
      for (let i = 0; i < 40 && (await staged()).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await staged()).toEqual([]);
      expect(await total(`${w}/files`)).toBe(before);
    });
  });

  describe('search treats LIKE wildcards literally everywhere in the area', () => {
    it('% and _ in search match only themselves in tasks, workflows, calendar events and files', async () => {
      await req('POST', `${w}/tasks`, a.apiKey, { name: 'Wild 100%_done' });
      await req('POST', `${w}/tasks`, a.apiKey, { name: 'Wild 1000Xdone' });
      await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Wild 100%_done', agentId: agent });
      await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Wild 1000Xdone', agentId: agent });
      await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Wild 100%_done',
        startTime: '2026-01-01T09:00:00Z',
      });
      await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Wild 1000Xdone',
        startTime: '2026-01-01T09:00:00Z',
      });
      await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { name: 'Wild 100%_done.png' });
      await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { name: 'Wild 1000Xdone.png' });
      for (const list of ['tasks', 'workflows', 'calendar-events', 'files']) {
        const names = async (search: string) =>
          (await req('GET', `${w}/${list}?search=${encodeURIComponent(search)}`, a.apiKey)).body.items.map(
            (x: { name?: string; title?: string }) => x.name ?? x.title,
          );
        expect({ list, found: await names('0%_d') }).toEqual({
          list,
          found: [list === 'files' ? 'Wild 100%_done.png' : 'Wild 100%_done'],
        });
        expect({ list, found: await names('Wild _') }).toEqual({ list, found: [] });
        expect({ list, found: await names('\\') }).toEqual({ list, found: [] });
      }
    });
  });
});
