import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WrongExpectedRevisionError } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { loggableError } from '../logging/loggable-error';
import { DomainError, TooManyRequestsError } from './domain-errors';
import { ReplayedResponse } from './idempotency';

export const INTERNAL_ERROR_DETAIL = 'An internal server error occurred';

export interface ErrorResponse {
  status: number;
  detail: string;
  headers: Record<string, string>;
}

function fastifyErrorDetail(code: string, message: string): string {
  switch (code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is not valid JSON';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type; send application/json';
    default:
      return message;
  }
}

/** Maps anything thrown to the status and `{detail}` body the spec requires. */
export function toErrorResponse(exception: unknown): ErrorResponse {
  const headers: Record<string, string> = {};
  if (exception instanceof DomainError) {
    if (exception.status === 401) headers['WWW-Authenticate'] = 'Bearer';
    if (exception instanceof TooManyRequestsError)
      headers['Retry-After'] = String(exception.retryAfterSeconds);
    return { status: exception.status, detail: exception.message, headers };
  }
  if (exception instanceof WrongExpectedRevisionError) {
    return {
      status: 409,
      detail: 'The resource was changed by another request; reload it and try again',
      headers,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    let detail = exception.message;
    if (typeof body === 'object' && body !== null) {
      const m =
        (body as { detail?: unknown; message?: unknown }).detail ?? (body as { message?: unknown }).message;
      if (Array.isArray(m)) detail = m.join('; ');
      else if (typeof m === 'string') detail = m;
    }
    if (status === 404 && /^Cannot (\w+) (.*)$/.test(detail)) {
      const [, method, path] = /^Cannot (\w+) (.*)$/.exec(detail)!;
      detail = `No route matches ${method} ${path.split('?')[0]}`;
    }
    if (status === 401) headers['WWW-Authenticate'] = 'Bearer';
    if (status >= 500) return { status, detail: INTERNAL_ERROR_DETAIL, headers };
    return { status, detail, headers };
  }
  const fst = exception as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (typeof fst?.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
    return {
      status: fst.statusCode,
      detail: fastifyErrorDetail(String(fst.code ?? ''), String(fst.message ?? 'Bad request')),
      headers,
    };
  }
  return { status: 500, detail: INTERNAL_ERROR_DETAIL, headers };
}

@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();
    // Not a failure: the kept answer to an Idempotency-Key, sent as it was (core/http/idempotency.ts).
    if (exception instanceof ReplayedResponse) {
      if (!reply.sent) exception.send(reply);
      return;
    }
    const res = toErrorResponse(exception);
    if (res.status >= 500) {
      this.logger.event('error', {
        msg: 'request failed',
        requestId: request?.id,
        method: request?.method,
        route: request?.routeOptions?.url,
        err: loggableError(exception),
      });
    }
    if (reply.sent) return;
    void reply.status(res.status).headers(res.headers).send({ detail: res.detail });
  }
}
