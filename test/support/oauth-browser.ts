import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from './app';

/**
 * A small browser for the authorization pages, over node's fetch: it keeps cookies,
 * follows nothing by itself (each redirect is asserted), and reads the page's forms (their
 * action, hidden fields and workspace choices), so the sign-in and consent steps are
 * driven through the HTML the server renders, as a person's browser would.
 */
export class OAuthBrowser {
  private readonly cookies = new Map<string, string>();

  /** `headers` go with every request (an X-Forwarded-For, to act from another address). */
  constructor(private readonly headers: Record<string, string> = {}) {}

  async get(url: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.send(url, { method: 'GET', headers: { accept: 'text/html', ...headers } });
  }

  async submit(form: Form, fields: Record<string, string>): Promise<Page> {
    const body = new URLSearchParams({ ...form.hidden, ...fields }).toString();
    return this.send(form.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body,
    });
  }

  forgetCookies(): void {
    this.cookies.clear();
  }

  private async send(url: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      ...init,
      headers: { ...this.headers, ...init.headers, ...(cookie ? { cookie } : {}) },
      redirect: 'manual',
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return new Page(url, res.status, res.headers, await res.text());
  }
}

export interface Form {
  action: string;
  hidden: Record<string, string>;
  /** The options of its select, if any (workspace id → name). */
  options: Record<string, string>;
}

function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export class Page {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly headers: Headers,
    readonly html: string,
  ) {}

  /** The redirect's target, resolved against the page's address. */
  get location(): string | null {
    const l = this.headers.get('location');
    return l === null ? null : new URL(l, this.url).toString();
  }

  /** The page's text without tags, for assertions on what a person reads. */
  get text(): string {
    return unescape(this.html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');
  }

  form(): Form {
    const m = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(this.html);
    if (!m) throw new Error(`no form on the page (${this.status}): ${this.text.slice(0, 300)}`);
    const hidden: Record<string, string> = {};
    for (const h of m[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      hidden[unescape(h[1])] = unescape(h[2]);
    const options: Record<string, string> = {};
    for (const o of m[2].matchAll(/<option value="([^"]+)">([^<]*)<\/option>/g))
      options[unescape(o[1])] = unescape(o[2]);
    return { action: new URL(unescape(m[1]), this.url).toString(), hidden, options };
  }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const PASSWORD = 'correct horse battery staple';

export interface Owner {
  workspaceId: string;
  accountUuid: string;
  memberId: number;
  apiKey: string;
  email: string;
}

let owners = 0;

/** A bootstrapped workspace whose account has a password. */
export async function ownerWithPassword(t: TestApp, workspace = 'Acme', password = PASSWORD): Promise<Owner> {
  const email = `oauth-owner${++owners}-${process.pid}@example.com`;
  const b = await t.bootstrap(workspace, email);
  const res = await t.request('PUT', '/me/password', { token: b.apiKey, body: { newPassword: password } });
  if (res.status !== 204) throw new Error(`password: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    workspaceId: b.workspaceId,
    accountUuid: b.accountUuid,
    memberId: b.memberId,
    apiKey: b.apiKey,
    email,
  };
}

export interface App {
  id: string;
  clientId: string;
  clientSecret: string | null;
}

export async function createApp(
  t: TestApp,
  apiKey: string,
  body: Record<string, unknown> = {},
): Promise<App> {
  const res = await t.request('POST', '/me/apps', {
    token: apiKey,
    body: {
      name: 'CRM assistant',
      redirectUris: ['https://client.example.com/callback'],
      scopes: ['workspace:read', 'members:read', 'data:write', 'task:read'],
      ...body,
    },
  });
  if (res.status !== 201) throw new Error(`app: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as App;
}

export function authorizeUrl(t: TestApp, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  return `${t.baseUrl}/oauth/authorize?${q.toString()}`;
}

/**
 * The whole front channel: authorization request → sign-in page → consent page →
 * decision. Answers the final redirect's URL (with code or error).
 */
export async function authorizeThroughPages(
  t: TestApp,
  owner: Owner,
  params: Record<string, string | undefined>,
  opts: { decision?: 'approve' | 'deny'; workspaceId?: string; browser?: OAuthBrowser } = {},
): Promise<URL> {
  const browser = opts.browser ?? new OAuthBrowser();
  let page = await browser.get(authorizeUrl(t, { response_type: 'code', ...params }));
  if (page.status !== 200)
    throw new Error(`authorize: ${page.status} ${page.location ?? page.text.slice(0, 200)}`);
  if (page.text.includes('Sign in')) {
    page = await browser.submit(page.form(), { email: owner.email, password: PASSWORD });
    if (page.status !== 303) throw new Error(`sign-in: ${page.status} ${page.text.slice(0, 300)}`);
    page = await browser.get(page.location!);
  }
  const consent = page.form();
  page = await browser.submit(consent, {
    decision: opts.decision ?? 'approve',
    workspace_id: opts.workspaceId ?? owner.workspaceId,
  });
  if (page.status !== 303 || !page.location)
    throw new Error(`consent: ${page.status} ${page.text.slice(0, 300)}`);
  return new URL(page.location);
}

/** POST a form to an OAuth endpoint; `basic` sends client credentials as HTTP Basic. */
export async function postForm(
  t: TestApp,
  path: string,
  form: Record<string, string | undefined>,
  basic?: { id: string; secret: string },
): Promise<{ status: number; headers: Headers; body: Record<string, any> }> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.append(k, v);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic)
    headers.authorization = `Basic ${Buffer.from(
      `${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`,
    ).toString('base64')}`;
  const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body: body.toString() });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, any>) : {},
  };
}

export const REDIRECT = 'https://client.example.com/callback';

/** Authorization code flow to tokens for a confidential app (PKCE S256 included). */
export async function tokensFor(
  t: TestApp,
  owner: Owner,
  app: App,
  scope = 'workspace:read members:read',
): Promise<Record<string, any>> {
  const { verifier, challenge } = pkcePair();
  const redirect = await authorizeThroughPages(t, owner, {
    client_id: app.clientId,
    redirect_uri: REDIRECT,
    scope,
    state: 's',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const res = await postForm(t, '/oauth/token', {
    grant_type: 'authorization_code',
    code: redirect.searchParams.get('code') ?? undefined,
    redirect_uri: REDIRECT,
    client_id: app.clientId,
    client_secret: app.clientSecret ?? undefined,
    code_verifier: verifier,
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
