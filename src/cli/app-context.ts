import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module';
import { AppConfig } from '../core/config/config';
import { JsonLogger } from '../core/logging/json-logger';

/**
 * The CLI runs the application without HTTP. It runs the projections too (ROLE=all),
 * so its writes reach the read models even when no service is running; when one is,
 * the leadership locks leave the work to whichever process holds them.
 */
export async function withAppContext<T>(
  config: AppConfig,
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const logger = new JsonLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot({ ...config, role: 'all' }, logger),
    {
      logger,
      abortOnError: false,
    },
  );
  await app.init();
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}
