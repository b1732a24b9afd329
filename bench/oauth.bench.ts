/**
 * `npm run bench -- oauth`: the authorization server and the MCP endpoint through real
 * HTTP, the service as a child process (dist/main.js, as the http bench runs it) on a fresh
 * database and Redis prefix.
 *
 * 1. Refresh grant: `POST /oauth/token` (`grant_type=refresh_token`, HTTP Basic) at
 *    BENCH_HTTP_CONNECTIONS (16) for BENCH_HTTP_SECONDS (5); each connection has its own
 *    grant (authorized through the sign-in and consent pages) and follows its rotation.
 * 2. MCP `records.search` beside the REST search it mirrors (`GET .../records?search=`),
 *    same OAuth token, same query, over BENCH_OAUTH_RECORDS (1,000) records, alternated in
 *    1-second slices at the same connections. Target (issue 13): MCP p50 ≤ 1.5× REST p50.
 * Writes bench-results/oauth-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createTestDatabase } from '../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import type { TestApp } from '../test/support/app';
import { authorizeThroughPages, OAuthBrowser, PASSWORD, pkcePair } from '../test/support/oauth-browser';
import { bootstrapBenchWorkspace, startService, Service } from './http.bench';
import { EMPTY, LoadClient, LoadRequest, Measured, merge, percentile } from './http-load';
import { describeEnvironment, printTable, writeResults } from './report';

const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const RECORDS = Number(process.env.BENCH_OAUTH_RECORDS ?? 1_000);
const HOST = '127.0.0.1';
const REDIRECT = 'https://client.example.com/callback';

function stats(m: Measured) {
  const sorted = [...m.latenciesMs].sort((a, b) => a - b);
  return {
    requests: m.requests,
    rps: m.requests / m.seconds,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    unexpected: m.unexpected,
  };
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 2, application_name: 'bench-oauth' });
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'production',
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
  };
  let service: Service | undefined;
  try {
    const svc = await startService(env);
    service = svc.proc;
    const email = 'owner@example.com';
    const boot = await bootstrapBenchWorkspace(env, email);
    const base = `http://${HOST}:${svc.port}/api/v2`;
    const api = new LoadClient(HOST, svc.port, CONNECTIONS);
    const json = async (method: string, path: string, body: unknown, token = boot.apiKey) => {
      const res = await api.send({
        method,
        path: `/api/v2${path}`,
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
      return (res.body ? JSON.parse(res.body) : {}) as Record<string, any>;
    };
    await json('PUT', '/me/password', { newPassword: PASSWORD });
    const app = await json('POST', '/me/apps', {
      name: 'Bench client',
      redirectUris: [REDIRECT],
      scopes: ['data:read', 'data:write'],
    });
    const basic = `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`;
    const t = { baseUrl: base } as TestApp;
    const owner = { ...boot, email };
    const browser = new OAuthBrowser();
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    const grant = async () => {
      const { verifier, challenge } = pkcePair();
      const redirect = await authorizeThroughPages(
        t,
        owner,
        {
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          scope: 'data:read data:write',
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        { browser },
      );
      const res = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: form({
          grant_type: 'authorization_code',
          code: redirect.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      });
      if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
      return (await res.json()) as { access_token: string; refresh_token: string };
    };
    const grants = [];
    for (let i = 0; i < CONNECTIONS; i++) grants.push(await grant());
    const environment = await describeEnvironment(pool);
    console.log(`database ${db.name}; ${JSON.stringify(environment)}`);

    // 1. Refresh grant: each connection follows its own rotation chain.
    const refreshLatencies: number[] = [];
    const unexpected: Record<string, number> = {};
    const started = performance.now();
    const deadline = started + SECONDS * 1000;
    await Promise.all(
      grants.map(async (g) => {
        let refresh = g.refresh_token;
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const res = await api.send({
            method: 'POST',
            path: '/api/v2/oauth/token',
            headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
            body: form({ grant_type: 'refresh_token', refresh_token: refresh }),
          });
          refreshLatencies.push(performance.now() - t0);
          if (res.status !== 200) {
            unexpected[res.status] = (unexpected[res.status] ?? 0) + 1;
            throw new Error(`refresh: ${res.status} ${res.body}`);
          }
          refresh = (JSON.parse(res.body) as { refresh_token: string }).refresh_token;
        }
      }),
    );
    const refresh = stats({
      requests: refreshLatencies.length,
      seconds: (performance.now() - started) / 1000,
      latenciesMs: refreshLatencies,
      unexpected,
    });

    // 2. MCP records.search beside REST search, same token and query.
    const token = (await grant()).access_token;
    const type = await json('POST', `/w/${boot.workspaceId}/data-types`, {
      name: 'Contacts',
      slug: 'contacts',
      fields: [
        { name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
        { name: 'Age', slug: 'age', fieldType: 'number' },
      ],
    });
    for (let done = 0; done < RECORDS; done += 1000) {
      const records = Array.from({ length: Math.min(1000, RECORDS - done) }, (_, i) => ({
        externalId: `c-${done + i}`,
        fieldValues: { name: `Person ${done + i}`, age: (done + i) % 90 },
      }));
      await json('POST', `/w/${boot.workspaceId}/data-types/${type.id}/records/bulk`, { records });
    }
    const search = 'person 42';
    const rest = (): LoadRequest => ({
      method: 'GET',
      path: `/api/v2/w/${boot.workspaceId}/data-types/${type.id}/records?search=${encodeURIComponent(search)}`,
      headers: { authorization: `Bearer ${token}` },
    });
    const rpc = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'records.search', arguments: { dataTypeId: type.id, search } },
    });
    const mcp = (): LoadRequest => ({
      method: 'POST',
      path: '/api/v2/mcp',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
      body: rpc,
    });
    // Both answer the same records: the MCP result is the REST body.
    const restBody = JSON.parse((await api.send(rest())).body) as { total: number };
    const mcpBody = JSON.parse((await api.send(mcp())).body) as {
      result: { isError?: boolean; structuredContent: { total: number } };
    };
    if (mcpBody.result.isError || mcpBody.result.structuredContent.total !== restBody.total)
      throw new Error(`MCP and REST differ: ${JSON.stringify(mcpBody).slice(0, 300)}`);
    await api.run(CONNECTIONS, 1, 200, rest);
    await api.run(CONNECTIONS, 1, 200, mcp);
    let restM = EMPTY;
    let mcpM = EMPTY;
    for (let s = 0; s < SECONDS; s++) {
      restM = merge(restM, await api.run(CONNECTIONS, 1, 200, rest));
      mcpM = merge(mcpM, await api.run(CONNECTIONS, 1, 200, mcp));
    }
    const restS = stats(restM);
    const mcpS = stats(mcpM);
    const ratio = mcpS.p50 / restS.p50;
    api.close();

    const row = (name: string, s: ReturnType<typeof stats>) => [
      name,
      s.requests.toString(),
      s.rps.toFixed(0),
      s.p50.toFixed(2),
      s.p95.toFixed(2),
      s.p99.toFixed(2),
    ];
    printTable(
      ['case', 'requests', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms'],
      [
        row(`POST /oauth/token refresh (${CONNECTIONS} conn)`, refresh),
        row(`REST records search (${CONNECTIONS} conn)`, restS),
        row(`MCP records.search (${CONNECTIONS} conn)`, mcpS),
      ],
    );
    console.log(
      `MCP p50 / REST p50 = ${ratio.toFixed(2)}× (target ≤ 1.5×): ${ratio <= 1.5 ? 'met' : 'NOT met'}`,
    );
    writeResults('oauth', {
      environment,
      connections: CONNECTIONS,
      seconds: SECONDS,
      records: RECORDS,
      refresh,
      restSearch: restS,
      mcpSearch: mcpS,
      mcpOverRestP50: ratio,
    });
  } finally {
    await service?.stop();
    await pool.end();
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}
