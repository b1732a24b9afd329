import { UnsupportedMediaTypeError, ValidationError } from './domain-errors';

/** The key a route's Fastify config carries when it also reads form-encoded bodies. */
export const ROUTE_FORM_BODY = 'formBody';

const ROUTE_CONFIG_METADATA = '__fastify_route_config__'; // @nestjs/platform-fastify's RouteConfig key

/**
 * The route also reads `application/x-www-form-urlencoded` bodies (protocols that
 * prescribe them, such as HTML forms and RFC 6749's token endpoint). Every other route
 * stays JSON-only: a form body there is 415 as before. Merged into the route's Fastify
 * config like markRouteAuth, so the body parser (body-parsing.ts) can tell per route.
 */
export function AcceptsFormBody(): MethodDecorator {
  return ((_target: object, _key: string | symbol, descriptor: PropertyDescriptor) => {
    const handler = descriptor.value as object;
    const config = (Reflect.getMetadata(ROUTE_CONFIG_METADATA, handler) as object | undefined) ?? {};
    Reflect.defineMetadata(ROUTE_CONFIG_METADATA, { ...config, [ROUTE_FORM_BODY]: true }, handler);
  }) as MethodDecorator;
}

/**
 * A form body as an object of strings. A parameter sent twice becomes an array, so the
 * route can refuse it (RFC 6749 §3.1: parameters MUST NOT be included more than once)
 * instead of one of the values winning silently.
 */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(text);
  } catch {
    throw new ValidationError('The request body is not valid form encoding');
  }
  for (const [key, value] of params) {
    if (key === '__proto__' || key === 'constructor')
      throw new ValidationError(`${key}: the key "${key}" is not allowed`);
    const had = out[key];
    out[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return { ...out };
}

export function formBodyNotAccepted(): UnsupportedMediaTypeError {
  return new UnsupportedMediaTypeError(
    'Content-Type application/x-www-form-urlencoded is not supported; send application/json',
  );
}
