import { Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidationArguments,
} from 'class-validator';
import type { WhereExpressionBuilder } from 'typeorm';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
export const MAX_SEARCH_LENGTH = 200;
/**
 * The last page a list serves: page × pageSize must stay a safe integer and within SQL's
 * bigint OFFSET (`?page=99999999999999999999` used to reach PostgreSQL as "5e+21", a 500).
 */
export const MAX_PAGE = 1_000_000_000;

/** The widest UTC offset (in whole hours, plus up to 59 minutes) a date-time may carry. */
export const MAX_OFFSET_HOURS = 15;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * An ISO 8601 date-time with an offset (`2024-05-01T12:00:00Z`, `2024-05-01T14:00+02:00`),
 * as `YYYY-MM-DDTHH:MM:SS[.fraction]±HH:MM` or `...Z` (offsets up to ±15:59, the instant
 * within the years 0001–9999 in UTC), with its instant in nanoseconds since
 * the epoch (for comparisons finer than Date's milliseconds); null when not such a string or
 * not a real calendar time.
 */
export function parseDateTime(value: unknown): { iso: string; epochNanos: bigint } | null {
  if (typeof value !== 'string') return null;
  const m = DATE_TIME.exec(value);
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone] = m;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number);
  if (y < 1 || h > 23 || mi > 59 || s > 59) return null;
  // setUTCFullYear, unlike Date.UTC, takes years below 100 literally; a day past the end
  // of its month rolls over, which the round trip below catches.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  let offset = 'Z';
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    // PostgreSQL reads offsets up to ±15:59 ("time zone displacement out of range" beyond),
    // and every offset in use lies within −12:00 … +14:00. A wider one, valid ISO 8601 as it
    // is, would reach the database as a 500 in a list filter, or stop a projection that
    // writes the time as sent: it is refused here like any other bad date-time.
    if (oh > MAX_OFFSET_HOURS || om > 59) return null;
    offset = `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2) || '00'}`;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  date.setUTCHours(h, mi - offsetMinutes, s, 0);
  // The instant must itself be writable as YYYY-MM-DDTHH:MM:SSZ: answers give times in UTC,
  // and `0001-01-01T00:00+01:00` (year 0 in UTC) or `9999-12-31T23:00-05:00` (year 10000)
  // came back as `0000-…` / `+010000-…`, which no client parses as RFC 3339 and this very
  // function refuses, so a resource could not be sent back as read.
  const utcYear = date.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return null;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${offset}`;
  const epochNanos = BigInt(date.getTime()) * 1_000_000n + BigInt(fraction.padEnd(9, '0') || '0');
  return { iso, epochNanos };
}

/** class-validator: an ISO 8601 date-time with an offset (see parseDateTime). */
function IsDateTime(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => parseDateTime(value) !== null,
        defaultMessage: () => 'must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00Z',
      },
    });
}

/** class-validator: not later than the date-time in `other` (when both are valid). */
function NotAfter(other: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'notAfter',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const mine = parseDateTime(value);
          const theirs = parseDateTime((args.object as Record<string, unknown>)[other]);
          return !mine || !theirs || mine.epochNanos <= theirs.epochNanos;
        },
        defaultMessage: () => `must not be after ${other}`,
      },
    });
}

/**
 * class-validator: equal to `other` when both are given. `pageSize` and its alias
 * `page_size` with different values is a client mix-up, answered 400 naming both rather
 * than one of them silently winning (equal values are fine).
 */
function SameAs(other: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'sameAs',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const theirs = (args.object as Record<string, unknown>)[other];
          return value === undefined || theirs === undefined || value === theirs;
        },
        defaultMessage: () => `must equal ${other} when both are given (it is an alias of ${other})`,
      },
    });
}

/**
 * Query parameters every list accepts: `page` from 1, `pageSize` or `page_size` up to 1000 (both: equal),
 * `search` (a case-insensitive substring of the list's searchable fields) and the
 * `startTime` (inclusive) / `endTime` (exclusive) window on its timestamp.
 */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    description: 'alias of pageSize; both given with different values is a 400',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  @SameAs('pageSize')
  page_size?: number;

  @ApiPropertyOptional({
    maxLength: MAX_SEARCH_LENGTH,
    description:
      'case-insensitive substring, trimmed (% and _ are literal; empty: no filter), of: members name, email, phone, externalId; ' +
      'invitations email; events type, streamName; workspaces, member roles, API keys name',
  })
  @IsOptional()
  // `?search=` (a cleared search box) means no filter.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim() || undefined : value,
  )
  @IsString()
  @MaxLength(MAX_SEARCH_LENGTH)
  search?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2024-05-01T00:00:00Z',
    description:
      'only items at or after this ISO 8601 date-time with an offset (creation time; events: occurrence time)',
  })
  @IsOptional()
  @IsDateTime()
  @NotAfter('endTime')
  startTime?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2024-06-01T00:00:00Z',
    description: 'only items before this ISO 8601 date-time with an offset (exclusive)',
  })
  @IsOptional()
  @IsDateTime()
  endTime?: string;
}

/** Filters every list applies: search text and a [startTime, endTime) window, both optional. */
export interface ListFilters {
  search?: string;
  /** ISO 8601 with an offset, normalised; pass to SQL as `::timestamptz`. */
  startTime?: string;
  endTime?: string;
}

export interface PageRequest extends ListFilters {
  page: number;
  pageSize: number;
  offset: number;
}

/** The page and the list filters of a validated PageQueryDto (or a DTO extending it). */
export function toPageRequest(q: PageQueryDto): PageRequest {
  const page = q.page ?? 1;
  const pageSize = q.pageSize ?? q.page_size ?? DEFAULT_PAGE_SIZE;
  return {
    page,
    pageSize,
    offset: (page - 1) * pageSize,
    search: q.search,
    startTime: parseDateTime(q.startTime)?.iso,
    endTime: parseDateTime(q.endTime)?.iso,
  };
}

/** `value` with LIKE's wildcards (and the escape character) escaped, for `LIKE ... ESCAPE '\'`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Which columns a list searches (case-insensitive substring) and which timestamp it windows. */
export interface ListFilterColumns {
  search: string[];
  time: string;
}

/**
 * SQL conditions for the list filters of `req`, with positional parameters appended to
 * `params` (`$n`, numbered after those already there); AND them with the list's own.
 */
export function listFilterConditions(
  req: ListFilters,
  columns: ListFilterColumns,
  params: unknown[],
): string[] {
  const where: string[] = [];
  if (req.search !== undefined) {
    params.push(`%${escapeLike(req.search)}%`);
    const p = `$${params.length}`;
    where.push(`(${columns.search.map((c) => `${c} ILIKE ${p} ESCAPE '\\'`).join(' OR ')})`);
  }
  if (req.startTime !== undefined) {
    params.push(req.startTime);
    where.push(`${columns.time} >= $${params.length}::timestamptz`);
  }
  if (req.endTime !== undefined) {
    params.push(req.endTime);
    where.push(`${columns.time} < $${params.length}::timestamptz`);
  }
  return where;
}

/** listFilterConditions for a TypeORM query builder (named parameters `listSearch`, `listStart`, `listEnd`). */
export function applyListFilters<Q extends WhereExpressionBuilder>(
  qb: Q,
  req: ListFilters,
  columns: ListFilterColumns,
): Q {
  if (req.search !== undefined)
    qb.andWhere(`(${columns.search.map((c) => `${c} ILIKE :listSearch ESCAPE '\\'`).join(' OR ')})`, {
      listSearch: `%${escapeLike(req.search)}%`,
    });
  if (req.startTime !== undefined)
    qb.andWhere(`${columns.time} >= CAST(:listStart AS timestamptz)`, { listStart: req.startTime });
  if (req.endTime !== undefined)
    qb.andWhere(`${columns.time} < CAST(:listEnd AS timestamptz)`, { listEnd: req.endTime });
  return qb;
}

export interface Paginated<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

export function paginated<T>(items: T[], total: number, req: PageRequest): Paginated<T> {
  return { items, total, page: req.page, pageSize: req.pageSize };
}

/**
 * The OpenAPI shape of a list of `item`: `class MemberListResponse extends
 * PaginatedResponse(MemberResponse) {}` documents `{items, total, page, pageSize}` once.
 */
export function PaginatedResponse<T>(item: ClassType<T>): ClassType<Paginated<T>> {
  class PaginatedOf implements Paginated<T> {
    @ApiProperty({ type: [item] }) items: T[];
    @ApiProperty() total: number;
    @ApiProperty() page: number;
    @ApiProperty() pageSize: number;
  }
  return PaginatedOf;
}
