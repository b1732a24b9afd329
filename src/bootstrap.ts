import 'reflect-metadata';
import { DynamicModule, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AppConfig } from './core/config/config';
import { HttpExceptionFilter } from './core/http/http-exception.filter';
import { registerInputGuard } from './core/http/input-guard';
import { setupOpenApi } from './core/http/openapi';
import { registerRequestHooks, requestIdFor } from './core/http/request-context';
import { createValidationPipe } from './core/http/validation';
import { JsonLogger } from './core/logging/json-logger';

export const API_PREFIX = 'api/v2';

/** Builds the HTTP application (initialised, not yet listening). Used by main.ts and the e2e harness. */
export async function createHttpApp(
  config: AppConfig,
  logger = new JsonLogger(config.logLevel),
  extraModules: DynamicModule['imports'] = [],
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    logger: false,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdFor(req),
    bodyLimit: 25 * 1024 * 1024,
    return503OnClosing: true,
    trustProxy: config.trustProxy,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, extraModules),
    adapter,
    {
      logger,
      bufferLogs: false,
      abortOnError: false,
    },
  );
  registerRequestHooks(app.getHttpAdapter().getInstance(), logger);
  registerInputGuard(app.getHttpAdapter().getInstance());
  app.setGlobalPrefix(API_PREFIX, { exclude: [{ path: 'admin/{*path}', method: RequestMethod.ALL }] });
  app.useGlobalFilters(new HttpExceptionFilter(logger));
  app.useGlobalPipes(createValidationPipe());
  setupOpenApi(app, config.publicBaseUrl);
  await app.init();
  return app;
}
