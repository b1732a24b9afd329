import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min, registerDecorator } from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { NotFoundError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';

/** class-validator: an ISO 8601 date-time with an offset (core's parseDateTime). */
export function IsOffsetDateTime(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isOffsetDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => value === null || parseDateTime(value) !== null,
        defaultMessage: () => 'must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00Z',
      },
    });
}

/** An optional integer id in a query string (1 to 2147483647, else 400 naming it). */
export const OptionalQueryId = (): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(1),
    Max(MAX_ID),
  );

/** A path id that is not a positive 32-bit integer names nothing: 404, like an unknown id. */
export function pathIdOf(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) throw new NotFoundError(`${what} not found`);
  return Number(raw);
}
