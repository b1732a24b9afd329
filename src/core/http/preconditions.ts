import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VersionedTable } from '../features/feature';
import { PreconditionFailedError, ValidationError } from './domain-errors';

/**
 * Conditional writes (RFC 9110 §13.1.1). A resource's ETag is `"<version>"`, where the
 * version is a counter its read model row bumps on every change it shows, whatever the
 * event that caused it (a role merge moves members without touching their own streams).
 * A write with `If-Match` is refused with 412 unless the row is still at that version, and
 * the command then appends at the stream revision the row was built from: a change that
 * landed but is not yet projected makes that append fail, also with 412. Without
 * `If-Match` a write is last-writer-wins per field, as before.
 */

const RESOURCE_VERSION = Symbol('resourceVersion');

/** Marks a response body with its version; the ETag interceptor turns it into the header (never JSON). */
export function withVersion<T extends object>(body: T, version: number): T {
  Object.defineProperty(body, RESOURCE_VERSION, { value: version, enumerable: false });
  return body;
}

export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * Sets `ETag` on a response whose body carries a version (see withVersion). Called by the
 * request-context hooks (core/cqrs/request-context.hooks.ts) on every JSON answer (no Nest
 * interceptor: each costs Nest AsyncResource bindings and rxjs operators per request).
 */
export function setETagFrom(body: unknown, reply: FastifyReply): void {
  if (typeof body !== 'object' || body === null) return;
  const version = (body as Record<symbol, unknown>)[RESOURCE_VERSION];
  if (typeof version === 'number') void reply.header('ETag', etagOf(version));
}

const ENTITY_TAG = /^"(\d{1,15})"$/;

/**
 * The versions an If-Match header accepts: undefined when absent or `*` (any current
 * representation: the resource must exist, which the route checks anyway). A weak tag
 * (W/"3") never matches under If-Match's strong comparison, so it is refused as malformed
 * rather than silently failing every time.
 */
export function parseIfMatch(header: string | string[] | undefined): number[] | undefined {
  if (header === undefined) return undefined;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value === '*') return undefined;
  const tags = value.split(',').map((t) => t.trim());
  const versions = tags.map((t) => ENTITY_TAG.exec(t)?.[1]);
  if (!tags.length || versions.some((v) => v === undefined))
    throw new ValidationError(
      'If-Match: expected "*" or entity tags such as "3", as sent in the ETag header',
    );
  return versions.map(Number);
}

/** The parsed If-Match header of the request (see parseIfMatch). */
export const IfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext): number[] | undefined =>
  parseIfMatch(ctx.switchToHttp().getRequest<FastifyRequest>().headers['if-match']),
);

/** OpenAPI for a write that honours If-Match. */
export const ConditionalWrite = (): MethodDecorator =>
  applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description: 'An ETag from a read of this resource: the write only applies if nothing changed since.',
    }),
    ApiResponse({ status: 412, description: 'The resource changed since the If-Match version.' }),
  );

/**
 * The stream revision a write with this If-Match must append at: undefined without the
 * header (or with `*`), 412 when the read-model row is no longer at a listed version,
 * `notFound` when there is no row. `table` has `version` and `stream_revision` columns;
 * workspace-scoped rows are looked up within their workspace.
 */
export async function pinnedRevision(
  db: { query(sql: string, params: unknown[]): Promise<unknown> },
  ifMatch: number[] | undefined,
  row: {
    /** A table some feature declares versioned (core/features VersionedTables). */
    table: VersionedTable;
    id: string | number;
    workspaceId?: string;
    notFound: () => Error;
  },
): Promise<bigint | undefined> {
  if (ifMatch === undefined) return undefined;
  const scoped = row.workspaceId !== undefined;
  const rows = (await db.query(
    `SELECT version, stream_revision::text AS stream_revision FROM ${row.table} WHERE id = $1${scoped ? ' AND workspace_id = $2' : ''}`,
    scoped ? [row.id, row.workspaceId] : [row.id],
  )) as { version: number; stream_revision: string }[];
  if (!rows.length) throw row.notFound();
  const { version, stream_revision } = rows[0];
  if (!ifMatch.includes(version))
    throw new PreconditionFailedError(
      `If-Match: the resource has changed since that version (it is now at ${etagOf(version)}); reload it and try again`,
    );
  return BigInt(stream_revision);
}
