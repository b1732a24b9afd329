import { applyDecorators, SetMetadata } from '@nestjs/common';
import { markRouteConfig } from './route-auth';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const CREATED_LOCATION = 'http:created-location';
/** Every path the API serves is under this prefix (bootstrap.ts sets it). */
const API_BASE_PATH = '/api/v2';

/** The created resource's path below /api/v2, from the response body and the route's path parameters. */
export type LocationOf<T> = (body: T, params: Record<string, string>) => string;

/** Encodes one value for a path segment (ids are numbers or UUIDs, but never trust that). */
export const seg = (value: string | number): string => encodeURIComponent(String(value));

/**
 * Sets `Location` on a 201 whose route declares @CreatedLocation. Called by the
 * request-context hooks (core/cqrs/request-context.hooks.ts) with the route's declaration
 * (kept in its Fastify route config), so a creating route runs no interceptor. Only a 201 says it created something
 * (create-signup answers 200 for an existing member).
 */
export function setCreatedLocation(
  locate: LocationOf<unknown> | undefined,
  body: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (!locate || reply.statusCode !== 201) return;
  const params = (request.params ?? {}) as Record<string, string>;
  void reply.header('Location', API_BASE_PATH + locate(body, params));
}

/**
 * The route answers 201 with `Location: /api/v2/...` of what it created. Every route
 * that can answer 201 says where explicitly (a test walks the controllers to check).
 */
export function CreatedLocation<T>(locate: LocationOf<T>): MethodDecorator {
  return applyDecorators(SetMetadata(CREATED_LOCATION, locate), markRouteConfig(CREATED_LOCATION, locate));
}
