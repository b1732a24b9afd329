import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { JsonLogger } from '../logging/json-logger';

/**
 * The longest path parameter the router takes, as sent (percent-encoded). Fastify's
 * default of 100 refused `POST .../upsert/{externalId}` for an externalId of 101 to 255
 * characters, which every other route accepts: 255 characters of 3 UTF-8 bytes each are
 * 255 × 9 characters once percent-encoded. Longer is a 414.
 */
export const MAX_PARAM_LENGTH = 255 * 9;
/** Node's default --max-http-header-size, restated because the 431 detail names it. */
const MAX_HEADER_KB = 16;

/**
 * Errors the router meets before any route or hook runs (a path parameter over the
 * router's limit, a path that is not valid percent-encoding): answered like every
 * other 4xx, `{detail}` with X-Request-Id, instead of Fastify's own JSON shape.
 */
export function frameworkErrors(error: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let status = 400;
  let detail = 'The request is malformed';
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    status = 414;
    detail = `A path segment is longer than ${MAX_PARAM_LENGTH} characters, the limit of a path parameter`;
  } else if (error.code === 'FST_ERR_BAD_URL') {
    detail = 'The path is not valid percent-encoding';
  }
  void reply.code(status).header('X-Request-Id', req.id).send({ detail });
}

/**
 * Errors Node's HTTP parser meets before a request exists (headers over the size limit,
 * bytes that are not HTTP, a request that never finished arriving). Node hands them to
 * the server's 'clientError' listener (Fastify's clientErrorHandler option) and answers
 * nothing itself, so the answer is written here, on the raw socket, in our shape.
 */
export function clientErrorHandler(logger: JsonLogger) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let status = 400;
    let detail = 'The request is not valid HTTP';
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      detail = `The request line and headers are larger than ${MAX_HEADER_KB} KB in all`;
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      detail = 'The request did not arrive in time';
    }
    const requestId = randomUUID();
    logger.event('info', { msg: 'request', route: 'unparsed', status, requestId, err: err.code });
    if (socket.writable) {
      const body = JSON.stringify({ detail });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(err);
  };
}
