/** The key the auth decorators set in a route's Fastify config (request.routeOptions.config). */
export const ROUTE_AUTH = 'auth';
export type RouteAuth = 'public' | 'credential';

const ROUTE_CONFIG_METADATA = '__fastify_route_config__'; // @nestjs/platform-fastify's RouteConfig key

/**
 * Marks a route handler in its Fastify route config, merged with any other config the
 * route has (Nest's RouteConfig() would replace it). On a class it does nothing: the
 * config is per route.
 */
export function markRouteAuth(auth: RouteAuth): MethodDecorator & ClassDecorator {
  return markRouteConfig(ROUTE_AUTH, auth);
}

/**
 * Sets one key of a route handler's Fastify route config, merged with the rest (the
 * hooks that run before Nest's pipeline read it from request.routeOptions.config).
 */
export function markRouteConfig(key: string, value: unknown): MethodDecorator & ClassDecorator {
  return ((_target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const handler = descriptor?.value as object | undefined;
    if (!handler) return;
    const config = (Reflect.getMetadata(ROUTE_CONFIG_METADATA, handler) as object | undefined) ?? {};
    Reflect.defineMetadata(ROUTE_CONFIG_METADATA, { ...config, [key]: value }, handler);
  }) as MethodDecorator & ClassDecorator;
}

/** One key of the route config of the route a request matched. */
export function routeConfigValue(req: { routeOptions?: { config?: unknown } }, key: string): unknown {
  return (req.routeOptions?.config as Record<string, unknown> | undefined)?.[key];
}
