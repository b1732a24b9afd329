import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

function describe(errors: ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      for (const [key, msg] of Object.entries(e.constraints)) {
        out.push(
          key === 'whitelistValidation'
            ? `${path}: unknown field`
            : `${path}: ${msg.replace(new RegExp(`^${e.property} `), '')}`,
        );
      }
    }
    if (e.children?.length) out.push(...describe(e.children, path));
  }
  return out;
}

/**
 * Whitelisting with unknown fields refused; the detail names every failing field,
 * e.g. "name: must be a string; colour: unknown field".
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new BadRequestException({ detail: describe(errors).join('; ') || 'Invalid request' }),
  });
}
