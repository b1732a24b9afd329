import { createServer, IncomingMessage, Server } from 'node:http';
import twilio from 'twilio';

/** One message the peer accepted through its REST API. */
export interface PeerMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  statusCallback: string;
  /** The Basic credentials it came with. */
  username: string;
  password: string;
}

export interface TwilioPeer {
  /** Base URL to give the service as TWILIO_API_BASE_URL. */
  url: string;
  accountSid: string;
  authToken: string;
  messages: PeerMessage[];
  /** Calls it accepted through Calls.json: the form fields as sent, with the call's sid. */
  calls: { sid: string; form: Record<string, string> }[];
  /** Recordings it serves (GET .../Recordings/{sid}.wav, Basic auth), by recording sid. */
  recordings: Map<string, Buffer>;
  /** The media URL of a recording, as Twilio's RecordingUrl gives it (no extension). */
  recordingUrl(sid: string): string;
  /** How many fetches of recordings it answered. */
  recordingFetches: number;
  /**
   * When set, every accepted message gets this status posted to its StatusCallback right
   * after the REST answer, signed as Twilio signs it: a callback under `publicBaseUrl` goes
   * to the same path under `appBaseUrl`, any other address as it is. `callbacks` counts
   * the callbacks answered 2xx, `callbackFailures` the others. `answerAfter`: the
   * callback goes out first and the REST answer once the promise it returns settles (a
   * callback that reaches the service before the provider's answer does).
   */
  autoStatus?: {
    status: string;
    appBaseUrl: string;
    publicBaseUrl: string;
    answerAfter?: () => Promise<unknown>;
  };
  callbacks: number;
  callbackFailures: number;
  /** Messages.json requests that came with the right credentials (accepted or failed). */
  messageRequests: number;
  /**
   * Answers for the next Messages.json requests, in order, instead of accepting them: the
   * status with Twilio's error body (`code`); nothing is recorded in `messages`.
   */
  failNext: { status: number; code: number }[];
  /** When set, an accepted message's REST answer waits until the promise it returns settles. */
  holdAnswers?: () => Promise<unknown>;
  /**
   * Posts a signed webhook as Twilio does: signed over `publicUrl` (what the service
   * was configured with, PUBLIC_BASE_URL...), sent to the same path under `appBaseUrl`.
   */
  webhook(
    publicUrl: string,
    appBaseUrl: string,
    publicBaseUrl: string,
    params: Record<string, string>,
    signature?: string,
  ): Promise<Response>;
  /** The status callback of an accepted message, signed. */
  status(
    message: PeerMessage,
    appBaseUrl: string,
    publicBaseUrl: string,
    status: string,
    errorCode?: string,
  ): Promise<Response>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/**
 * A local server speaking the part of Twilio's REST API the service uses (Messages.json,
 * Basic auth with the account SID and auth token) and sending signed webhooks the way
 * Twilio does, signatures made by the twilio package itself.
 */
export async function startTwilioPeer(): Promise<TwilioPeer> {
  const accountSid = `AC${'0123456789abcdef'.repeat(2)}`;
  const authToken = 'peer-auth-token-0123456789abcdef';
  const messages: PeerMessage[] = [];
  const recordings = new Map<string, Buffer>();
  const calls: { sid: string; form: Record<string, string> }[] = [];
  let counter = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const media = /^\/2010-04-01\/Accounts\/([^/]+)\/Recordings\/([^/.]+)\.wav$/.exec(req.url ?? '');
      if (req.method === 'GET' && media) {
        const creds = Buffer.from(
          (req.headers.authorization ?? '').replace(/^Basic /, ''),
          'base64',
        ).toString();
        const wav = recordings.get(media[2]);
        if (creds !== `${accountSid}:${authToken}` || media[1] !== accountSid) res.writeHead(401).end();
        else if (!wav) res.writeHead(404).end();
        else {
          peer.recordingFetches++;
          res.writeHead(200, { 'content-type': 'audio/x-wav', 'content-length': wav.length }).end(wav);
        }
        return;
      }
      const callMatch = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\.json$/.exec(req.url ?? '');
      if (req.method === 'POST' && callMatch) {
        const creds = Buffer.from(
          (req.headers.authorization ?? '').replace(/^Basic /, ''),
          'base64',
        ).toString();
        if (creds !== `${accountSid}:${authToken}` || callMatch[1] !== accountSid) {
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ code: 20003, status: 401 }));
          return;
        }
        const sid = `CA${String(++counter).padStart(32, '0')}`;
        const form = Object.fromEntries(new URLSearchParams(body));
        calls.push({ sid, form });
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ sid, account_sid: accountSid, to: form.To, from: form.From, status: 'queued' }),
          );
        return;
      }
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
      const auth = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const [username, password] = auth.split(':');
      if (req.method !== 'POST' || !match) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 20404, status: 404 }));
        return;
      }
      if (username !== accountSid || password !== authToken || match[1] !== accountSid) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 20003, status: 401 }));
        return;
      }
      peer.messageRequests++;
      const failure = peer.failNext.shift();
      if (failure) {
        res.writeHead(failure.status, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            code: failure.code,
            message: `error ${failure.code}`,
            more_info: `https://www.twilio.com/docs/errors/${failure.code}`,
            status: failure.status,
          }),
        );
        return;
      }
      const form = new URLSearchParams(body);
      const sid = `SM${String(++counter).padStart(32, '0')}`;
      const message: PeerMessage = {
        sid,
        to: form.get('To') ?? '',
        from: form.get('From') ?? '',
        body: form.get('Body') ?? '',
        statusCallback: form.get('StatusCallback') ?? '',
        username,
        password,
      };
      messages.push(message);
      const callBack = () => {
        const auto = peer.autoStatus;
        if (!auto || !message.statusCallback) return;
        const ours = message.statusCallback.startsWith(auto.publicBaseUrl);
        void peer
          .status(message, ours ? auto.appBaseUrl : '', ours ? auto.publicBaseUrl : '', auto.status)
          .then(
            async (r) => {
              await r.arrayBuffer();
              if (r.ok) peer.callbacks++;
              else peer.callbackFailures++;
            },
            () => peer.callbackFailures++,
          );
      };
      if (peer.holdAnswers) await peer.holdAnswers().catch(() => undefined);
      const answerAfter = peer.autoStatus?.answerAfter;
      if (!answerAfter) res.on('finish', callBack);
      else {
        callBack();
        await answerAfter().catch(() => undefined);
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          sid,
          account_sid: accountSid,
          to: message.to,
          from: message.from,
          body: message.body,
          status: 'queued',
          error_code: null,
          num_segments: '1',
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  const peer: TwilioPeer = {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    messages,
    recordings,
    calls,
    recordingFetches: 0,
    callbacks: 0,
    callbackFailures: 0,
    messageRequests: 0,
    failNext: [],
    recordingUrl: (sid) => `http://127.0.0.1:${port}/2010-04-01/Accounts/${accountSid}/Recordings/${sid}`,
    async webhook(publicUrl, appBaseUrl, publicBaseUrl, params, signature) {
      const sig = signature ?? twilio.getExpectedTwilioSignature(authToken, publicUrl, params);
      const target = appBaseUrl + publicUrl.slice(publicBaseUrl.length);
      return fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
        body: new URLSearchParams(params).toString(),
      });
    },
    status(message, appBaseUrl, publicBaseUrl, status, errorCode) {
      return peer.webhook(message.statusCallback, appBaseUrl, publicBaseUrl, {
        AccountSid: accountSid,
        MessageSid: message.sid,
        MessageStatus: status,
        To: message.to,
        From: message.from,
        ...(errorCode ? { ErrorCode: errorCode } : {}),
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return peer;
}

/** The service's configuration that sends SMS and calls to this peer (SMS_PROVIDER=twilio). */
export function twilioServiceEnv(peer: TwilioPeer): Record<string, string> {
  return {
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: peer.accountSid,
    TWILIO_AUTH_TOKEN: peer.authToken,
    TWILIO_API_BASE_URL: peer.url,
  };
}
