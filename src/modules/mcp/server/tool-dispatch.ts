import { Injectable, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { principalOf } from '../../../core/auth/auth.guard';
import {
  Credential,
  MEMBERSHIP_RESOLVER,
  Membership,
  MembershipResolver,
} from '../../../core/auth/principal';
import { grants } from '../../../core/auth/scopes';
import { asOwnDispatch } from '../../../core/cqrs/read-your-writes';
import { RequestContext, requestContext } from '../../../core/cqrs/request-context';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import { toErrorResponse } from '../../../core/http/http-exception.filter';
import { createValidationPipe } from '../../../core/http/validation';
import { JsonLogger } from '../../../core/logging/json-logger';
import { loggableError } from '../../../core/logging/loggable-error';
import type { McpTool } from './tools';

/** A tool's answer as its REST route would give it: the status and the body (`{detail}` for a refusal). */
export interface ToolAnswer {
  status: number;
  body: unknown;
}

/** Runs one tool in a workspace with its arguments, for one MCP request. */
export type Dispatch = (
  tool: McpTool,
  workspaceId: string,
  args: Record<string, unknown>,
) => Promise<ToolAnswer>;

/** The MCP request's caller: its credential and, for a credential bound to a workspace, its membership there. */
export interface DispatchCaller {
  credential: Credential;
  requestId: string;
  boundWorkspaceId?: string;
  membership?: Membership;
}

/**
 * A tool call, run in-process the way its REST route runs, step for step:
 * - the guard's part: the caller's membership in the workspace (else 404 `Workspace not
 *   found`), its principal there built by core's `principalOf` (the guard's own), and the
 *   route's scope unless the route is open to self-access;
 * - the pipe's part: the arguments through the route's own DTO and core's validation pipe
 *   (`createValidationPipe`, the global one), so a refusal names the field alike;
 * - the handler's part: the tool's `run`, the route's commands and queries through the
 *   buses, inside a request context whose actor is that principal's (an OAuth token's client
 *   id included) and whose appends are the MCP request's own: core's read-your-writes buses
 *   make a later call of the same request read them, and the request context interceptor
 *   holds the MCP response until the projections have passed them;
 * - the exception filter's part: anything thrown becomes the status and `{detail}` of
 *   core's `toErrorResponse` (a 5xx is logged with the request id and core's
 *   `loggableError` of its cause: class, code, stack frames, never the message, which can
 *   quote argument values, nor the arguments; the cause is never sent).
 * What the MCP request already passed is not repeated: its credential was resolved and
 * its rate limit admitted once, and no HTTP request is built or serialized per call.
 */
@Injectable()
export class ToolDispatcher {
  private readonly pipe = createValidationPipe();

  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly modules: ModuleRef,
    private readonly logger: JsonLogger,
  ) {}

  /** Core's membership resolver (identity provides it for the guard); looked up, not imported, to stay out of identity's room. */
  private get memberships(): MembershipResolver {
    return this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
  }

  forRequest(caller: DispatchCaller): Dispatch {
    const outer = requestContext.current();
    // One list of appends for the whole MCP request: a call reads what an earlier one wrote.
    const appended = outer?.appended ?? [];
    return async (tool, workspaceId, args) => {
      try {
        const membership =
          caller.membership && caller.boundWorkspaceId === workspaceId
            ? caller.membership
            : await this.memberships.find(workspaceId, caller.credential);
        if (!membership) throw new NotFoundError('Workspace not found');
        const principal = principalOf(caller.credential, membership);
        if (!tool.selfAccess && !grants(principal.effectiveScopes, tool.scope))
          throw new ForbiddenError(`This credential lacks the scope ${tool.scope}`);
        const ctx: RequestContext = {
          requestId: outer?.requestId ?? caller.requestId,
          actor: principal.actor,
          ...(outer?.causationId !== undefined ? { causationId: outer.causationId } : {}),
          appended,
        };
        // A route's work, even when a handler asks for it (the assistant's service tools):
        // its reads wait for its own writes as the route's would.
        const body = await asOwnDispatch(() =>
          requestContext.run(ctx, () =>
            tool.run({
              workspaceId,
              principal,
              commands: this.commands,
              queries: this.queries,
              param: (name) => String(args[name]),
              query: (dto) => this.validate(dto, 'query', queryOf(tool, args)),
              body: (dto) => this.validate(dto, 'body', bodyOf(tool, args)),
            }),
          ),
        );
        return { status: 200, body };
      } catch (err) {
        const res = toErrorResponse(err);
        if (res.status >= 500)
          this.logger.event('error', {
            msg: 'MCP tool call failed',
            requestId: caller.requestId,
            tool: tool.name,
            err: loggableError(err),
          });
        return { status: res.status, body: { detail: res.detail } };
      }
    };
  }

  private validate<T>(dto: Type<T>, type: 'query' | 'body', value: Record<string, unknown>): Promise<T> {
    return this.pipe.transform(value, { type, metatype: dto }) as Promise<T>;
  }
}

/** The query arguments as a query string carries them: strings (the route's DTO converts them). */
function queryOf(tool: McpTool, args: Record<string, unknown>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const key of tool.query ?? []) if (args[key] !== undefined) query[key] = String(args[key]);
  return query;
}

function bodyOf(tool: McpTool, args: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of tool.body ?? []) if (args[key] !== undefined) body[key] = args[key];
  return body;
}
