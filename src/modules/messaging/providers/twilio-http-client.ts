import twilio from 'twilio';
import { Agent, request } from 'undici';

type RequestOptions<TData> = Parameters<twilio.RequestClient['request']>[0] & { data?: TData };
type TwilioResponse<TData> = Awaited<ReturnType<twilio.RequestClient['request']>> & { body: TData };

/** Twilio's own API host: a client with another base URL sends what the package addresses there to it. */
export const TWILIO_API = 'https://api.twilio.com';

/**
 * Form fields as the package's own client encodes them (`qs`, `arrayFormat: repeat`): an
 * array repeats its name, an undefined value is left out, null is empty.
 */
function formOf(fields: object): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? (value as unknown[]) : [value])
      if (v !== undefined) form.append(name, v === null ? '' : String(v));
  }
  return form.toString();
}

/**
 * The HTTP client the twilio package sends through (its `httpClient` option), on undici
 * rather than the package's axios: the package still builds every request (paths, form
 * fields, Basic authentication, User-Agent) and reads every answer (JSON, its
 * RestException for a non-2xx); this only carries them, over a keep-alive pool. axios and
 * its follow-redirects layer were 6% of the service's CPU in the messaging bench, about
 * a tenth of a millisecond per SMS. Redirects are not followed (as the package's client,
 * whose `allowRedirects` nobody sets here). `baseUrl` other than Twilio's moves the
 * package's requests there (TWILIO_API_BASE_URL: a Twilio-compatible API, the tests' peer).
 */
export class TwilioHttpClient extends twilio.RequestClient {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    timeoutMs: number,
  ) {
    // The base class's axios instance and https agent stay unused.
    super({ timeout: timeoutMs });
    this.agent = new Agent({ connections: 32, keepAliveTimeout: 30_000 });
  }

  override async request<TData>(opts: RequestOptions<TData>): Promise<TwilioResponse<TData>> {
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
    if (opts.username && opts.password)
      headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
    else if (opts.authStrategy) headers.Authorization = await opts.authStrategy.getAuthString();
    let url = opts.uri.startsWith(TWILIO_API) ? this.baseUrl + opts.uri.slice(TWILIO_API.length) : opts.uri;
    if (opts.params && Object.keys(opts.params).length)
      url += (url.includes('?') ? '&' : '?') + formOf(opts.params);
    let body: string | undefined;
    if (opts.data !== undefined && opts.data !== null) {
      const type = headers['Content-Type'];
      if (type === 'application/x-www-form-urlencoded') body = formOf(opts.data as object);
      else if (type === 'application/json') body = JSON.stringify(opts.data);
    }
    const timeout = opts.timeout ?? this.defaultTimeout;
    const res = await request(url, {
      method: opts.method.toUpperCase() as 'GET',
      headers,
      body,
      dispatcher: this.agent,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    // The package parses a string body itself (JSON, or its error for a non-2xx).
    const text = await res.body.text();
    return { statusCode: res.statusCode, body: text as TData, headers: res.headers };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
