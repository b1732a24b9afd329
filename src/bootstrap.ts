import 'reflect-metadata';
import { DynamicModule, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AppConfig } from './core/config/config';
import { registerBodyParsers } from './core/http/body-parsing';
import { corsDelegate } from './core/http/cors';
import { registerEarlyAuth } from './core/http/early-auth';
import { CREDENTIAL_RESOLVER, CredentialResolver } from './core/auth/principal';
import { HttpExceptionFilter } from './core/http/http-exception.filter';
import { registerInputGuard } from './core/http/input-guard';
import { registerMethodNotAllowed } from './core/http/method-not-allowed';
import { registerMultipart } from './core/http/multipart';
import { setupOpenApi } from './core/http/openapi';
import { registerRequestHooks, requestIdFor } from './core/http/request-context';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH } from './core/http/transport-errors';
import { createValidationPipe } from './core/http/validation';
import { JsonLogger } from './core/logging/json-logger';
import { registerRequestContext } from './core/cqrs/request-context.hooks';
import { ConsistencyWaiter } from './core/projections/consistency';
import { RateLimiter } from './core/rate-limit/rate-limiter';

export const API_PREFIX = 'api/v2';
const BODY_LIMIT = 25 * 1024 * 1024;

/** Builds the HTTP application (initialised, not yet listening). Used by main.ts and the e2e harness. */
export async function createHttpApp(
  config: AppConfig,
  logger = new JsonLogger(config.logLevel),
  extraModules: DynamicModule['imports'] = [],
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    logger: false,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdFor(req),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    trustProxy: config.trustProxy,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(logger),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, extraModules),
    adapter,
    {
      logger,
      bufferLogs: false,
      abortOnError: false,
      // JSON only, parsed by registerBodyParsers (Nest's parsers would also read forms).
      bodyParser: false,
    },
  );
  // No origins configured: no CORS plugin, so no CORS header on any response.
  if (config.corsOrigins.length) app.enableCors({ delegator: corsDelegate(config.corsOrigins) });
  const fastify = app.getHttpAdapter().getInstance();
  // Hooks run in this order: request id first, so every answer below carries it.
  registerRequestHooks(fastify, logger);
  registerMethodNotAllowed(fastify);
  registerEarlyAuth(
    fastify,
    app.get(RateLimiter, { strict: false }),
    app.get<CredentialResolver>(CREDENTIAL_RESOLVER, { strict: false }),
  );
  registerBodyParsers(fastify, BODY_LIMIT);
  // After the JSON parsers: adds multipart/form-data for the routes that declare @MultipartBody.
  registerMultipart(fastify, BODY_LIMIT);
  registerInputGuard(fastify);
  // Before the application's own onSend hooks (registered at init: Idempotency-Key's keeps
  // an answer once it has waited for read-your-writes).
  registerRequestContext(fastify, app.get(ConsistencyWaiter), config.readYourWritesTimeoutMs, logger);
  app.setGlobalPrefix(API_PREFIX, { exclude: [{ path: 'admin/{*path}', method: RequestMethod.ALL }] });
  app.useGlobalFilters(new HttpExceptionFilter(logger));
  app.useGlobalPipes(createValidationPipe());
  setupOpenApi(app, config.publicBaseUrl);
  await app.init();
  return app;
}
