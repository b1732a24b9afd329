import { registerDecorator, ValidationArguments } from 'class-validator';
import { parseDateTime } from '../../../core/http/pagination';

export const DATE_TIME_MESSAGE =
  'must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00+05:30';

/** class-validator: an ISO 8601 date-time with an offset (core's parseDateTime), or null/absent where allowed. */
export function IsOffsetDateTime(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isOffsetDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => parseDateTime(value) !== null,
        defaultMessage: () => DATE_TIME_MESSAGE,
      },
    });
}

/** class-validator: strictly later than the date-time in `other` (when both are valid). */
export function IsAfter(other: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isAfter',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const mine = parseDateTime(value);
          const theirs = parseDateTime((args.object as Record<string, unknown>)[other]);
          return !mine || !theirs || mine.epochNanos > theirs.epochNanos;
        },
        defaultMessage: () => `must be after ${other}`,
      },
    });
}
