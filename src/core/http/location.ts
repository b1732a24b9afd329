import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { map, Observable } from 'rxjs';

export const CREATED_LOCATION = 'http:created-location';
/** Every path the API serves is under this prefix (bootstrap.ts sets it). */
const API_BASE_PATH = '/api/v2';

/** The created resource's path below /api/v2, from the response body and the route's path parameters. */
export type LocationOf<T> = (body: T, params: Record<string, string>) => string;

/** Encodes one value for a path segment (ids are numbers or UUIDs, but never trust that). */
export const seg = (value: string | number): string => encodeURIComponent(String(value));

@Injectable()
export class CreatedLocationInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const locate = this.reflector.get<LocationOf<unknown> | undefined>(
      CREATED_LOCATION,
      context.getHandler(),
    );
    const http = context.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const params = (http.getRequest<FastifyRequest>().params ?? {}) as Record<string, string>;
    return next.handle().pipe(
      map((body: unknown) => {
        // Only a 201 says it created something (create-signup answers 200 for an existing member).
        if (locate && reply.statusCode === 201)
          void reply.header('Location', API_BASE_PATH + locate(body, params));
        return body;
      }),
    );
  }
}

/**
 * The route answers 201 with `Location: /api/v2/...` of what it created. Every route
 * that can answer 201 says where explicitly (a test walks the controllers to check).
 */
export function CreatedLocation<T>(locate: LocationOf<T>): MethodDecorator {
  return applyDecorators(SetMetadata(CREATED_LOCATION, locate), UseInterceptors(CreatedLocationInterceptor));
}
