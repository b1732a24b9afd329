import { existsSync } from 'node:fs';
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { connect, createServer, Server, Socket } from 'node:net';
import { chromium, Browser } from 'playwright-core';
import { startTestApp, TestApp } from '../support/app';
import { mcpSession } from '../support/mcp-client';
import { createApp, Owner, ownerWithPassword, PASSWORD, pkcePair, postForm } from '../support/oauth-browser';
import { freePort } from '../support/processes';

/** Debian's chromium; .ci/run installs it when missing. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The sign-in and consent pages of the authorization-code flow driven in a real browser
 * (headless Chromium through playwright-core): the form posts, the session cookie, the
 * CSRF fields and the redirect to a loopback client (RFC 8252) are the browser's own.
 * The code is then exchanged and the token used on the MCP endpoint. PUBLIC_BASE_URL must
 * be the address the browser reaches, so the app is fronted by a TCP relay on a port
 * known before it starts.
 */
describe('OAuth pages in headless Chromium', () => {
  let t: TestApp;
  let owner: Owner;
  let relay: Server;
  let base: string;
  let browser: Browser;
  let callback: HttpServer;
  let callbackUrl: string;
  const received: URL[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`,
      );
    const port = await freePort();
    base = `http://127.0.0.1:${port}/api/v2`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base } });
    const target = Number(new URL(t.baseUrl).port);
    relay = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      const upstream = connect(target, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    // The native client's loopback redirect target (RFC 8252 §7.3).
    callback = createHttpServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      // Only the redirects: the browser also asks this origin for /favicon.ico.
      if (url.pathname === '/callback') received.push(url);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as { port: number }).port}/callback`;
    owner = await ownerWithPassword(t, 'Browser');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => relay?.close(resolve));
    await new Promise((resolve) => callback?.close(resolve));
    await t?.close();
  });

  const authorize = (clientId: string, challenge: string, state: string) =>
    `${base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbackUrl,
      scope: 'members:read data:read',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()}`;

  it('signs in, consents, lands on the client with code, state and iss, and the token works on /mcp', async () => {
    const app = await createApp(t, owner.apiKey, {
      redirectUris: ['http://127.0.0.1/callback'],
      scopes: ['members:read', 'data:read'],
    });
    const { verifier, challenge } = pkcePair();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorize(app.clientId, challenge, 'st-1'));
    expect(await page.title()).toMatch(/Sign in/i);

    await page.fill('#email', owner.email);
    await page.fill('#password', 'wrong password entirely');
    await page.click('button[type=submit]');
    expect(await page.content()).toContain('The email or password is not correct');

    await page.fill('#email', owner.email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('button[value=approve]');
    const consent = await page.content();
    expect(consent).toContain('CRM assistant');
    expect((await context.cookies()).map((c) => c.name)).toContain('ws_oauth_session');

    await page.selectOption('#workspace_id', owner.workspaceId);
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value=approve]')]);
    const landed = received.at(-1)!;
    expect(landed.searchParams.get('state')).toBe('st-1');
    expect(landed.searchParams.get('iss')).toBe(base);
    const code = landed.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const token = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callbackUrl,
      client_id: app.clientId,
      client_secret: app.clientSecret ?? undefined,
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);
    const mcp = await mcpSession(t, token.body.access_token as string);
    const tools = (await mcp.client.listTools()).tools.map((tool) => tool.name);
    await mcp.close();
    expect(tools).toContain('members.search');
    expect(tools).not.toContain('records.create');

    // Signed in already: a second authorization goes straight to consent; denying redirects with access_denied.
    await page.goto(authorize(app.clientId, challenge, 'st-2'));
    await page.waitForSelector('button[value=deny]');
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value=deny]')]);
    expect(Object.fromEntries(received.at(-1)!.searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'st-2',
    });
    await context.close();
  });

  it('shows an unregistered redirect URI as an error page and never navigates to it', async () => {
    const app = await createApp(t, owner.apiKey, { redirectUris: ['http://127.0.0.1/callback'] });
    const before = received.length;
    const page = await browser.newPage();
    const res = await page.goto(
      `${base}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: 'https://attacker.example.com/cb',
        scope: 'members:read',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }).toString()}`,
    );
    expect(res?.status()).toBe(400);
    expect(new URL(page.url()).host).toBe(new URL(base).host);
    expect(received.length).toBe(before);
    await page.close();
  });
});
