import Fastify from 'fastify';
import type { AppendResult } from '../event-store/event-store.port';
import { CREATED_LOCATION } from '../http/location';
import { withVersion } from '../http/preconditions';
import { JsonLogger } from '../logging/json-logger';
import type { ConsistencyWaiter } from '../projections/consistency';
import { requestContext } from './request-context';
import { registerRequestContext } from './request-context.hooks';

/**
 * The answer of a write whose read-your-writes wait fails (the waiter's query to the
 * checkpoints fails) is the filter's 500: it must not carry the ETag and Location of a
 * write whose projection it could not confirm, as no error answer does.
 */
it('a 500 for a failed read-your-writes wait carries no ETag and no Location', async () => {
  const waiter = {
    waitFor: () => Promise.reject(new Error('the checkpoints could not be read')),
  } as unknown as ConsistencyWaiter;
  const app = Fastify();
  registerRequestContext(app, waiter, 1000, new JsonLogger('silent'));
  app.post(
    '/things',
    { config: { [CREATED_LOCATION]: (body: { id: string }) => `/things/${body.id}` } },
    async (_req, reply) => {
      requestContext
        .current()!
        .appended.push({ position: { commit: 1n, prepare: 1n } } as unknown as AppendResult);
      void reply.code(201);
      return withVersion({ id: 'a' }, 3);
    },
  );
  try {
    const res = await app.inject({ method: 'POST', url: '/things' });
    expect(res.statusCode).toBe(500);
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers.location).toBeUndefined();
    expect(JSON.parse(res.body)).toEqual({ detail: 'An internal server error occurred' });
  } finally {
    await app.close();
  }
});
