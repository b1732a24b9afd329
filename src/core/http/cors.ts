import type { FastifyRequest } from 'fastify';

/** What a browser client may send: the credential, the body, and the headers of our conventions. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'X-Request-Id',
  // MCP clients send the protocol revision on every request after initialize (/mcp).
  'Mcp-Protocol-Version',
];
/** What a browser client may read beyond the CORS-safelisted response headers. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'ETag',
  'Location',
  'Retry-After',
  // A browser MCP client reads resource_metadata from a 401's challenge to find the authorization server.
  'WWW-Authenticate',
];
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

interface CorsRequestOptions {
  origin: string[] | false;
  methods?: string[];
  allowedHeaders?: string[];
  exposedHeaders?: string[];
  maxAge?: number;
  preflight?: boolean;
  strictPreflight?: boolean;
  credentials?: boolean;
}
type CorsDelegate = (
  req: FastifyRequest,
  cb: (err: Error | null, options: CorsRequestOptions) => void,
) => void;

/**
 * The options of @fastify/cors (through app.enableCors), decided per request: only an
 * allowed Origin gets CORS headers, and only an OPTIONS carrying
 * Access-Control-Request-Method is a preflight (204). Any other OPTIONS, and a preflight
 * from another origin, goes on to the router: 405 with Allow on a known path. Every
 * answer varies by Origin. Credentials are bearer tokens, never cookies, so
 * Access-Control-Allow-Credentials is not sent.
 */
export function corsDelegate(origins: readonly string[]): CorsDelegate {
  const allowed = new Set(origins);
  return (req, cb) => {
    const origin = req.headers.origin;
    if (!origin || !allowed.has(origin)) return cb(null, { origin: false });
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    cb(null, {
      origin: [...allowed],
      methods: CORS_METHODS,
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: PREFLIGHT_MAX_AGE,
      preflight,
      strictPreflight: false,
      credentials: false,
    });
  };
}
