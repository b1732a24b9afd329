import {
  CallHandler,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  NestInterceptor,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type { RecordCaller } from '../domain/record-access.policy';

export const callerOf = (p: Principal): RecordCaller => ({
  scopes: p.effectiveScopes,
  memberId: p.membership?.memberId,
  credentialScopes: p.credential.kind === 'member_token' ? undefined : p.credential.scopes,
});

/** A path id that is not a positive integer names nothing: 404, like an id that does not exist. */
export function pathId(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
    throw new NotFoundError(`${what} not found`);
  return Number(raw);
}

const FIELD_FILTERS = Symbol('recordFieldFilters');
type WithFilters = FastifyRequest & { [FIELD_FILTERS]?: Record<string, string> };
const MAX_FIELD_FILTERS = 20;

/**
 * `field.<slug>=value` query parameters have open names, which the list's whitelisted
 * query DTO would refuse: this interceptor (interceptors run before pipes) takes them out
 * of the query for @FieldFilters().
 */
@Injectable()
export class FieldFiltersInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<WithFilters>();
    const query = (req.query ?? {}) as Record<string, unknown>;
    // No prototype: `field.__proto__` must become a key that is refused, not a setter that drops the filter.
    const filters = Object.create(null) as Record<string, string>;
    for (const key of Object.keys(query)) {
      if (!key.startsWith('field.')) continue;
      const slug = key.slice('field.'.length);
      const value = query[key];
      if (typeof value !== 'string') throw new ValidationError(`query ${key}: give it once, as a string`);
      if (value.length > 1000) throw new ValidationError(`query ${key}: must be at most 1000 characters`);
      filters[slug] = value;
      delete query[key];
    }
    if (Object.keys(filters).length > MAX_FIELD_FILTERS)
      throw new ValidationError(`query: at most ${MAX_FIELD_FILTERS} field.<slug> filters`);
    req[FIELD_FILTERS] = filters;
    return next.handle();
  }
}

export const FieldFilters = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Record<string, string> =>
    ctx.switchToHttp().getRequest<WithFilters>()[FIELD_FILTERS] ?? {},
);

const BULK_KEYS = new Set(['records', 'upsert']);

/**
 * The bulk route's body (`{records, upsert?}`), checked here instead of by the global
 * ValidationPipe: with `transform` on, class-transformer copies every one of up to 10,000
 * records (and their values) into new objects before the handler sees them, a second copy
 * of the whole import for nothing (the handler checks each record on its own). The rules
 * are BulkRecordsDto's (which still documents the body): an object, `records` an array of
 * at most `max`, `upsert` a boolean, no other field.
 */
export function bulkBodyOf(body: unknown, max: number): { records: readonly unknown[]; upsert: boolean } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ValidationError('body: must be a JSON object with records');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !BULK_KEYS.has(k));
  if (unknown.length) throw new ValidationError(unknown.map((k) => `${k}: unknown field`).join('; '));
  if (!Array.isArray(b.records)) throw new ValidationError('records: must be an array');
  if (b.records.length > max) throw new ValidationError(`records: must contain no more than ${max} elements`);
  if (b.upsert !== undefined && typeof b.upsert !== 'boolean')
    throw new ValidationError('upsert: must be a boolean value');
  return { records: b.records as unknown[], upsert: b.upsert === true };
}

/** The raw parsed JSON body, left alone by the global ValidationPipe (see bulkBodyOf). */
export const RawBody = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): unknown => ctx.switchToHttp().getRequest<FastifyRequest>().body,
);
