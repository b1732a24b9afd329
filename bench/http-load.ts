import { Agent, request } from 'node:http';

/** One request of a load run: built per call, so each can name a new email or member. */
export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Measured {
  requests: number;
  seconds: number;
  latenciesMs: number[];
  /** Responses whose status was not the expected one, by status. */
  unexpected: Record<string, number>;
}

export interface Response {
  status: number;
  body: string;
}

/**
 * A small closed-loop load generator: `connections` loops, each sending its next request
 * as soon as the previous response has been read, over a keep-alive http.Agent with one
 * socket per loop (so it measures the server, not connection set-up). Raw node:http
 * rather than fetch: undici's extra layers cost the client CPU that, on a 2-core machine,
 * the server would otherwise have.
 */
export class LoadClient {
  private readonly agent: Agent;

  constructor(
    private readonly host: string,
    private readonly port: number,
    connections: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  send(req: LoadRequest): Promise<Response> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...req.headers };
      if (req.body !== undefined) {
        headers['content-type'] ??= 'application/json'; // a form (the OAuth token endpoint) names its own
        headers['content-length'] = Buffer.byteLength(req.body);
      }
      const r = request(
        { host: this.host, port: this.port, method: req.method, path: req.path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
          );
          res.on('error', reject);
        },
      );
      r.on('error', reject);
      r.end(req.body);
    });
  }

  /** Runs `connections` loops for `seconds`; `next(i)` builds the i-th request of the run. */
  async run(
    connections: number,
    seconds: number,
    expectStatus: number,
    next: (i: number) => LoadRequest,
  ): Promise<Measured> {
    const latencies: number[] = [];
    const unexpected: Record<string, number> = {};
    let issued = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < deadline) {
          const req = next(issued++);
          const t = performance.now();
          const res = await this.send(req);
          latencies.push(performance.now() - t);
          if (res.status !== expectStatus) {
            unexpected[res.status] = (unexpected[res.status] ?? 0) + 1;
            if (unexpected[res.status] === 1)
              console.warn(`  ${req.method} ${req.path}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
          }
        }
      }),
    );
    return {
      requests: latencies.length,
      seconds: (performance.now() - started) / 1000,
      latenciesMs: latencies,
      unexpected,
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

export function merge(a: Measured, b: Measured): Measured {
  const unexpected = { ...a.unexpected };
  for (const [k, v] of Object.entries(b.unexpected)) unexpected[k] = (unexpected[k] ?? 0) + v;
  return {
    requests: a.requests + b.requests,
    seconds: a.seconds + b.seconds,
    latenciesMs: a.latenciesMs.concat(b.latenciesMs),
    unexpected,
  };
}

export const EMPTY: Measured = { requests: 0, seconds: 0, latenciesMs: [], unexpected: {} };

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
