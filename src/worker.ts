import 'reflect-metadata';
import { installLeanAsyncResourceBind } from './core/runtime/async-resource-bind';
import { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AppConfig, loadConfig } from './core/config/config';
import { exitOnStartupError, onShutdownSignal } from './core/lifecycle';
import { JsonLogger } from './core/logging/json-logger';

/** ROLE=worker: projections, reactors and queue workers, no HTTP. */
export async function startWorker(
  config: AppConfig,
  extraModules: DynamicModule['imports'] = [],
): Promise<INestApplicationContext> {
  const logger = new JsonLogger(config.logLevel);
  const workerConfig: AppConfig = { ...config, role: 'worker' };
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot(workerConfig, logger, extraModules),
    { logger, abortOnError: false },
  );
  await app.init();
  logger.event('info', { msg: 'worker started', eventStore: config.eventStore });
  onShutdownSignal(() => app.close(), logger, config.shutdownTimeoutMs);
  return app;
}

if (require.main === module) {
  installLeanAsyncResourceBind();
  Promise.resolve()
    .then(() => startWorker(loadConfig()))
    .catch(exitOnStartupError);
}
