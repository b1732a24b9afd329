import fastifyMultipart from '@fastify/multipart';
import { applyDecorators } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mediaTypeOf } from './body-parsing';
import { markRouteConfig, routeConfigValue } from './route-auth';

/**
 * Bodies are JSON everywhere (body-parsing.ts), except on routes that declare
 * @MultipartBody: those read `multipart/form-data` and nothing else. The multipart parser
 * does not read the body; the route's handler streams its parts (request.file()), so an
 * upload is never held whole in memory and its size limit is the route's own.
 */

/** The route config key saying which body a route reads (absent: JSON). */
export const ROUTE_BODY = 'body';
export type RouteBody = 'json' | 'multipart';

/** The route reads `multipart/form-data` (uploads) instead of JSON. */
export const MultipartBody = (): MethodDecorator =>
  applyDecorators(markRouteConfig(ROUTE_BODY, 'multipart'), ApiConsumes('multipart/form-data'));

export function routeBody(req: Pick<FastifyRequest, 'routeOptions'>): RouteBody {
  return routeConfigValue(req, ROUTE_BODY) === 'multipart' ? 'multipart' : 'json';
}

/**
 * Limits of the multipart parser on every route that reads it: one file part, a few small
 * fields, bounded part headers. A route passes its own file size limit to request.file();
 * `defaultFileBytes` applies when it does not.
 */
export const MULTIPART_LIMITS = {
  fieldNameSize: 100,
  fieldSize: 64 * 1024,
  fields: 20,
  files: 1,
  parts: 21,
  headerPairs: 100,
} as const;

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Registers @fastify/multipart (its content-type parser only marks the request; nothing is
 * read until the handler asks) and keeps each route to its own kind of body: a multipart
 * body on a JSON route, or any other body on a multipart route, is 415 naming the type to
 * send, before anything of the body is read (a multipart route without a body answers 415
 * itself, after authorization: see readFilePart in the files feature).
 */
export function registerMultipart(fastify: FastifyInstance, defaultFileBytes: number): void {
  void fastify.register(fastifyMultipart, {
    limits: { ...MULTIPART_LIMITS, fileSize: defaultFileBytes },
    throwFileSizeLimit: true,
  });
  // preParsing: before any parser reads the body (a JSON body sent to an upload route is
  // refused without reading its 25 MB).
  fastify.addHook('preParsing', async (req: FastifyRequest, reply: FastifyReply) => {
    const type = mediaTypeOf(req);
    const expects = routeBody(req);
    if (expects === 'json' && type === 'multipart/form-data')
      return reply
        .code(415)
        .send({ detail: 'Content-Type multipart/form-data is not supported; send application/json' });
    // A request without a body passes: the route answers 415 after authorization, so a
    // workspace the caller cannot see is still 404 whatever was sent.
    if (expects === 'multipart' && type !== 'multipart/form-data' && hasBody(req))
      return reply.code(415).send({
        detail: type
          ? `Content-Type ${type} is not supported; send multipart/form-data`
          : 'The request has a body but no Content-Type; send multipart/form-data',
      });
  });
}
