import 'reflect-metadata';
import { installLeanAsyncResourceBind } from './core/runtime/async-resource-bind';
import { createHttpApp } from './bootstrap';
import { loadConfig } from './core/config/config';
import { exitOnStartupError, onShutdownSignal } from './core/lifecycle';
import { JsonLogger } from './core/logging/json-logger';
import { startWorker } from './worker';

async function main(): Promise<void> {
  installLeanAsyncResourceBind();
  const config = loadConfig();
  if (config.role === 'worker') {
    await startWorker(config);
    return;
  }
  const logger = new JsonLogger(config.logLevel);
  const app = await createHttpApp(config, logger);
  await app.listen({ port: config.port, host: config.host });
  logger.event('info', {
    msg: 'listening',
    port: config.port,
    role: config.role,
    eventStore: config.eventStore,
  });
  // Nest's close() stops modules (pools, projections) before the HTTP server; closing
  // Fastify first lets in-flight requests finish on live connections.
  onShutdownSignal(
    async () => {
      const fastify = app.getHttpAdapter().getInstance();
      const closed = fastify.close();
      // A request that finishes during close leaves an idle keep-alive socket behind
      // that server.close() would wait on; keep closing idle sockets until it is done.
      const sweep = setInterval(() => fastify.server.closeIdleConnections(), 100);
      await closed.finally(() => clearInterval(sweep));
      await app.close();
    },
    logger,
    config.shutdownTimeoutMs,
  );
}

if (require.main === module) main().catch(exitOnStartupError);
