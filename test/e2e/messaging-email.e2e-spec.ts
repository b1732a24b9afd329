import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';

const SECRET = 'inbound-mail-secret-for-tests';

interface Received {
  from: string;
  to: string[];
  subject: string;
  text: string;
  messageId: string;
}

/** Email chats: out through SMTP (nodemailer) to a local smtp-server, in as raw MIME from a gateway. */
describe('Messaging: email (e2e)', () => {
  let smtp: SMTPServer;
  const received: Received[] = [];
  let t: TestApp;
  let wid: string;
  let key: string;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((mail) => {
            received.push({
              from: mail.from?.value[0]?.address ?? '',
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: mail.subject ?? '',
              text: (mail.text ?? '').trim(),
              messageId: mail.messageId ?? '',
            });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as { port: number };
    t = await startTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, INBOUND_EMAIL_SECRET: SECRET } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Mail clinic'));
    await t.request('POST', `/w/${wid}/inboxes`, { token: key, body: { email: 'care@mail-clinic.example' } });
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("sends an assistant message by SMTP from the workspace's inbox and records it delivered", async () => {
    const member = await signup(t, wid, key, { email: 'patient@mail.example' });
    const chat = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'email', memberId: member.member.id },
    });
    const sent = await t.request('POST', `/w/${wid}/chats/${chat.body.id}/send-assistant-message`, {
      token: key,
      body: { message: 'Your lab results are ready.' },
    });
    expect(sent.status).toBe(201);
    const mail = await eventually(
      async () => received.find((m) => m.to.includes('patient@mail.example')),
      'the mail',
    );
    expect(mail).toMatchObject({ from: 'care@mail-clinic.example', text: 'Your lab results are ready.' });
    const message = await eventually(async () => {
      const m = await t.request('GET', `/w/${wid}/chats/${chat.body.id}/messages/${sent.body.id}`, {
        token: key,
      });
      return m.body.status === 'delivered' ? m.body : undefined;
    }, 'the delivery to be recorded');
    expect(message.deliveries).toMatchObject([{ status: 'delivered', providerMessageId: mail.messageId }]);
  });

  const mime = (from: string, to: string, subject: string, body: string) =>
    [
      `From: ${from}`,
      `To: ${to}`,
      `Subject: ${subject}`,
      `Message-ID: <${Math.random().toString(36).slice(2)}@sender.example>`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      body,
      '',
    ].join('\r\n');

  const postMail = (raw: string, secret?: string) =>
    fetch(`${t.baseUrl}/providers/email/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822', ...(secret ? { 'x-inbound-email-secret': secret } : {}) },
      body: raw,
    });

  it('records inbound mail to an inbox in the sender’s email chat (email.received source)', async () => {
    const raw = mime(
      'New Person <new.person@mail.example>',
      'care@mail-clinic.example',
      'Question',
      'Can I reschedule?',
    );
    const res = await postMail(raw, SECRET);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ recorded: true });
    const events = await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never);
    expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'ChatCreated', 'MessageReceived']);
    expect(events[2].data).toMatchObject({
      source: 'email',
      subject: 'Question',
      content: 'Can I reschedule?',
    });
    // The same mail delivered twice by the gateway is recorded once.
    const again = await postMail(raw, SECRET);
    expect(await t.eventsOf({ requestId: again.headers.get('x-request-id')! } as never)).toEqual([]);
  });

  it('refuses inbound mail without the shared secret (403) and ignores mail to no inbox', async () => {
    const raw = mime('a@mail.example', 'care@mail-clinic.example', 'x', 'y');
    expect((await postMail(raw)).status).toBe(403);
    expect((await postMail(raw, 'wrong')).status).toBe(403);
    const nowhere = await postMail(mime('a@mail.example', 'nobody@else.example', 'x', 'y'), SECRET);
    expect(await nowhere.json()).toEqual({ recorded: false });
  });
});
