import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { principalOf } from '../../../core/auth/auth.guard';
import {
  assistantCredential,
  Credential,
  MEMBERSHIP_RESOLVER,
  Membership,
  MembershipResolver,
  Principal,
  withRoleScopes,
} from '../../../core/auth/principal';
import { grants } from '../../../core/auth/scopes';
import { requestContext } from '../../../core/cqrs/request-context';
import { ToolDispatcher } from '../server/tool-dispatch';
import { MCP_TOOLS, McpTool, missingParam } from '../server/tools';
import {
  CallServiceToolCommand,
  ListServiceToolsQuery,
  ServiceTool,
  ServiceToolAnswer,
} from './service-tools.messages';

interface Agent {
  credential: Credential;
  membership: Membership;
  principal: Principal;
}

/** The agent member as the assistant acts as it: its membership, credential and principal. */
@Injectable()
export class AgentPrincipals {
  constructor(private readonly modules: ModuleRef) {}

  /** Core's membership resolver (identity provides it); looked up, not imported, to stay out of identity's room. */
  private get memberships(): MembershipResolver {
    return this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
  }

  /** The active agent member `memberId` of this workspace, or undefined. */
  async of(workspaceId: string, memberId: number): Promise<Agent | undefined> {
    const bare = assistantCredential(workspaceId, memberId);
    const membership = await this.memberships.find(workspaceId, bare);
    if (!membership || membership.kind !== 'agent' || membership.memberId !== memberId) return undefined;
    const credential = withRoleScopes(bare, membership);
    return { credential, membership, principal: principalOf(credential, membership) };
  }
}

/** The arguments' schema for the agent: the tool's own, without `workspaceId` (it acts in its chat's). */
function agentInputSchemaOf(tool: McpTool): Record<string, unknown> {
  return {
    type: 'object',
    properties: { ...tool.properties },
    required: [...tool.required],
    additionalProperties: false,
  };
}

@QueryHandler(ListServiceToolsQuery)
export class ListServiceToolsHandler implements IQueryHandler<ListServiceToolsQuery, ServiceTool[]> {
  constructor(private readonly agents: AgentPrincipals) {}

  async execute(q: ListServiceToolsQuery): Promise<ServiceTool[]> {
    const agent = await this.agents.of(q.workspaceId, q.agentMemberId);
    const scopes = agent?.principal.effectiveScopes ?? [];
    return MCP_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: agentInputSchemaOf(tool),
      readOnly: tool.readOnly,
      scope: tool.scope,
      granted: grants(scopes, tool.scope),
    }));
  }
}

const refused = (status: number, detail: string): ServiceToolAnswer => ({
  outcome: 'refused',
  status,
  detail,
});

@CommandHandler(CallServiceToolCommand)
export class CallServiceToolHandler implements ICommandHandler<CallServiceToolCommand, ServiceToolAnswer> {
  constructor(
    private readonly agents: AgentPrincipals,
    private readonly dispatcher: ToolDispatcher,
  ) {}

  async execute(c: CallServiceToolCommand): Promise<ServiceToolAnswer> {
    const tool = MCP_TOOLS.find((t) => t.name === c.name);
    if (!tool) return refused(404, `no service tool named ${c.name}`);
    const agent = await this.agents.of(c.workspaceId, c.agentMemberId);
    if (!agent) return refused(404, 'the agent member is not an active agent of this workspace');
    const given = c.args.workspaceId;
    if (given !== undefined && (typeof given !== 'string' || given.toLowerCase() !== c.workspaceId))
      return refused(404, 'workspaceId: this assistant acts in its own workspace only');
    // As the endpoint: a tool the caller's scopes do not allow is refused before anything runs.
    if (!grants(agent.principal.effectiveScopes, tool.scope))
      return refused(403, `This credential lacks the scope ${tool.scope}`);
    const missing = missingParam(tool, c.args);
    if (missing) return { outcome: 'invalid_arguments', status: 400, detail: `${missing}: required` };
    const dispatch = this.dispatcher.forRequest({
      credential: agent.credential,
      requestId: requestContext.current()?.requestId ?? uuidv7(),
      boundWorkspaceId: c.workspaceId,
      membership: agent.membership,
    });
    const res = await dispatch(tool, c.workspaceId, c.args);
    if (res.status < 400) return { outcome: 'ok', status: res.status, body: res.body };
    const detail = (res.body as { detail?: string } | undefined)?.detail ?? `HTTP ${res.status}`;
    const outcome =
      res.status >= 500
        ? 'failed'
        : res.status === 400
          ? 'invalid_arguments'
          : res.status === 401 || res.status === 403
            ? 'refused'
            : 'error';
    return { outcome, status: res.status, detail };
  }
}

export const SERVICE_TOOL_HANDLERS = [AgentPrincipals, ListServiceToolsHandler, CallServiceToolHandler];
