import { createServer, IncomingMessage, Server } from 'node:http';
import type { AppConfig } from '../../../core/config/config';
import { PermanentSendError } from './sms-provider.port';
import { TwilioSmsProvider } from './twilio-sms.provider';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * The twilio package sending through TwilioHttpClient (undici) to a local HTTP server
 * standing in for Twilio's REST API: what goes on the wire, and how answers come back.
 */
describe('TwilioSmsProvider over TwilioHttpClient', () => {
  const seen: Seen[] = [];
  let answer: { status: number; body: unknown } = { status: 201, body: {} };
  let server: Server;
  let provider: TwilioSmsProvider;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    provider = new TwilioSmsProvider({
      twilioAccountSid: 'AC0123456789abcdef0123456789abcdef',
      twilioAuthToken: 'secret-token',
      twilioApiBaseUrl: `http://127.0.0.1:${port}/`,
    } as AppConfig);
  });

  afterAll(async () => {
    await provider.onModuleDestroy();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => (seen.length = 0));

  it("posts the package's form to the rebased Messages API with Basic auth and reads its answer", async () => {
    answer = { status: 201, body: { sid: 'SM1', status: 'queued', error_code: null } };
    const result = await provider.send({
      to: '+14155550100',
      from: '+14155550999',
      body: 'Hello & good day = ✓',
      statusCallback: 'https://example.test/status?chatId=1&messageId=2',
    });
    expect(result).toEqual({ providerMessageId: 'SM1', status: 'sent' });
    expect(seen).toHaveLength(1);
    const [req] = seen;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json');
    expect(req.headers.authorization).toBe(
      `Basic ${Buffer.from('AC0123456789abcdef0123456789abcdef:secret-token').toString('base64')}`,
    );
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req.headers['user-agent']).toMatch(/^twilio-node\//);
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      To: '+14155550100',
      From: '+14155550999',
      Body: 'Hello & good day = ✓',
      StatusCallback: 'https://example.test/status?chatId=1&messageId=2',
    });
  });

  it('reports a delivered or failed answer as such', async () => {
    answer = { status: 201, body: { sid: 'SM2', status: 'failed', error_code: 30006 } };
    await expect(provider.send({ to: '+1', from: '+2', body: 'x', statusCallback: '' })).resolves.toEqual({
      providerMessageId: 'SM2',
      status: 'failed',
      errorCode: '30006',
    });
  });

  it("turns Twilio's permanent error codes into PermanentSendError, and others into errors to retry", async () => {
    answer = { status: 400, body: { code: 21610, message: 'Attempt to send to unsubscribed recipient' } };
    const permanent = await provider
      .send({ to: '+1', from: '+2', body: 'x', statusCallback: '' })
      .catch((e: unknown) => e);
    expect(permanent).toBeInstanceOf(PermanentSendError);
    expect((permanent as PermanentSendError).code).toBe('21610');

    answer = { status: 503, body: { code: 20500, message: 'Service unavailable' } };
    const transient = await provider
      .send({ to: '+1', from: '+2', body: 'x', statusCallback: '' })
      .catch((e: unknown) => e);
    expect(transient).toBeInstanceOf(Error);
    expect(transient).not.toBeInstanceOf(PermanentSendError);
    expect((transient as { status?: number }).status).toBe(503);
  });

  it('repeats the name of a list field (Calls API statusCallbackEvent) and sends booleans as text', async () => {
    answer = { status: 201, body: { sid: 'CA1', status: 'queued' } };
    await expect(
      provider.placeCall({
        to: '+14155550100',
        from: '+14155550999',
        statusCallback: 'https://example.test/voice/status',
        recordingStatusCallback: 'https://example.test/voice/recording',
      }),
    ).resolves.toEqual({ callSid: 'CA1' });
    const form = new URLSearchParams(seen[0].body);
    expect(seen[0].url).toBe('/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Calls.json');
    expect(form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    expect(form.get('Record')).toBe('true');
    expect(form.get('Twiml')).toBe('<Response><Pause length="1"/></Response>');
  });
});
