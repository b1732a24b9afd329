import type { FastifyInstance } from 'fastify';

/**
 * A known path asked with a method it does not serve is 405 with `Allow`, not 404.
 * The methods come from the routes as they are registered (onRoute); a request the
 * router did not match is tried against each of them. Wildcard routes (the docs
 * page's assets, the CORS preflight route) match any path and are left out.
 */
export function registerMethodNotAllowed(fastify: FastifyInstance): void {
  const methods = new Set<string>();
  fastify.addHook('onRoute', (route) => {
    for (const m of [route.method].flat()) methods.add(m.toUpperCase());
  });
  fastify.addHook('onRequest', (req, reply, done) => {
    // The CORS plugin's catch-all OPTIONS route hands what is not a preflight to the not-found handler.
    const unmatched = req.is404 || (req.method === 'OPTIONS' && req.routeOptions.url?.endsWith('*'));
    if (!unmatched) return done();
    const path = req.url.split('?')[0];
    const allowed = [...methods].filter((method) => {
      if (method === req.method) return false;
      try {
        const found = fastify.findRoute({ method, url: path });
        return !!found && !('*' in (found.params as Record<string, string>));
      } catch {
        return false; // a path the router cannot decode matches nothing: the 404 stands
      }
    });
    if (!allowed.length) return done();
    const allow = allowed.sort().join(', ');
    void reply
      .code(405)
      .header('Allow', allow)
      .send({ detail: `${req.method} is not allowed on ${path}; allowed: ${allow}` });
  });
}
