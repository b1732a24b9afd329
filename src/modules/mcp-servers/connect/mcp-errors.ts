import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ForbiddenAddressError } from '../../../core/net/outbound-address';
import type { McpFailureReason } from '../domain/mcp-server.events';

/** A refresh that failed, with the reason the details show. */
export class McpFetchError extends Error {
  constructor(
    readonly reason: McpFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'McpFetchError';
  }
}

const TLS_CODES = /CERT|TLS|SSL|SELF_SIGNED|DEPTH_ZERO|UNABLE_TO_(GET|VERIFY)|HOSTNAME_MISMATCH|ERR_TLS/i;
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** The chain of causes (fetch wraps the socket's error in a TypeError "fetch failed"). */
function causes(error: unknown): (Error & { code?: unknown })[] {
  const chain: (Error & { code?: unknown })[] = [];
  let e: unknown = error;
  // Not `instanceof Error`: errors made by node's core (sockets, TLS) may come from another realm.
  for (let i = 0; i < 6 && typeof e === 'object' && e !== null; i++) {
    chain.push(e as Error & { code?: unknown });
    e = (e as Error & { cause?: unknown }).cause;
  }
  return chain;
}

/** Whether the Streamable HTTP attempt failed in a way that means "this server speaks only HTTP+SSE". */
export function speaksOnlySse(error: unknown): boolean {
  return (
    error instanceof StreamableHTTPError &&
    typeof error.code === 'number' &&
    [400, 404, 405].includes(error.code)
  );
}

/** Sorts what went wrong into the reasons the details show; the detail is kept short and secret-free. */
export function classify(error: unknown, timedOut: boolean, timeoutMs: number): McpFetchError {
  // Ours, possibly wrapped by the SDK or fetch (a body cut off by the size cap, say).
  const own = causes(error).find((e) => e instanceof McpFetchError);
  if (own) return own as McpFetchError;
  if (timedOut) return new McpFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
  const chain = causes(error);
  const forbidden = chain.find((e) => e instanceof ForbiddenAddressError);
  if (forbidden) return new McpFetchError('forbidden_address', forbidden.message);
  const top = chain[0];
  if (
    error instanceof UnauthorizedError ||
    ((error instanceof StreamableHTTPError || error instanceof SseError) &&
      (error.code === 401 || error.code === 403))
  )
    return new McpFetchError(
      'unauthorized',
      `the server refused the credentials (HTTP ${(error as { code?: number }).code ?? 401})`,
    );
  const coded = chain.find((e) => typeof e.code === 'string');
  const code = coded ? String(coded.code) : undefined;
  if (code && TLS_CODES.test(code)) return new McpFetchError('tls', `${code}: ${coded!.message}`);
  if (code && UNREACHABLE_CODES.has(code))
    return new McpFetchError('unreachable', `${code}: ${coded!.message}`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT')
    return new McpFetchError('timeout', `${code}: ${coded!.message}`);
  if (error instanceof McpError && error.code === -32001)
    return new McpFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
  if (error instanceof StreamableHTTPError || error instanceof SseError)
    return new McpFetchError('protocol_error', `HTTP ${error.code ?? '?'}: ${error.message}`.slice(0, 500));
  return new McpFetchError(
    'protocol_error',
    `${top?.name ?? 'Error'}: ${top?.message ?? String(error)}`.slice(0, 500),
  );
}
