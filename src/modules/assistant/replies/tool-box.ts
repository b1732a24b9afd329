import { Inject, Injectable } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { AuthCache } from '../../../core/auth/auth-cache';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { findInputProblem } from '../../../core/http/input-guard';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { storableText } from '../../../core/text/storable-text';
import {
  CallMcpServerToolCommand,
  EnabledMcpServerTool,
  ListEnabledMcpServerToolsQuery,
  MCP_SERVER_EVENT_TYPES,
  McpToolCallFailed,
  McpToolResult,
} from '../../mcp-servers';
import { CallServiceToolCommand, ListServiceToolsQuery, ServiceTool, ServiceToolAnswer } from '../../mcp';
import {
  CUSTOM_TOOLKIT_EVENT_TYPES,
  EnabledCustomTool,
  ListEnabledCustomToolsQuery,
  ValidateCustomToolArgumentsQuery,
  ValidatedToolCall,
} from '../../toolkits';
import type { ToolOutcome, ToolSource } from '../domain/assistant.events';
import { LANGUAGE_MODEL, LanguageModel, ModelError, ModelTool } from '../model/language-model.port';

/** What the model gets back from a tool, bounded so one answer cannot fill the context. */
const RESULT_MAX_CHARS = 16_000;
/** The arguments text of one call the tools take; a longer one goes back to the model, unrun. */
export const ARGUMENTS_MAX_CHARS = 32_000;
/** How much of arguments text that is refused (too long, not JSON) the call's event keeps. */
const REFUSED_ARGUMENTS_KEPT = 1_000;

/**
 * Text that PostgreSQL can store (core's storableText), cut to `max` characters with `…`
 * marking the cut. What a model or a tool server answers is not checked like a request body
 * is, and one NUL would make the call's AssistantToolCalled (or the reply's message)
 * impossible to append.
 */
export function storable(text: string, max = Infinity): string {
  const out = storableText(text, { max });
  return text.length > max ? `${out}…` : out;
}

/** OpenAI's tool names: [a-zA-Z0-9_-]{1,64}. Longer or clashing names end in a short hash. */
export function modelToolName(prefix: string, name: string, taken: { has(name: string): boolean }): string {
  const clean = `${prefix}__${name}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  let candidate = clean.length <= 64 ? clean : clean.slice(0, 55);
  if (candidate !== clean || taken.has(candidate)) {
    const hash = createHash('sha256').update(`${prefix}\u0000${name}`).digest('hex').slice(0, 8);
    candidate = `${clean.slice(0, 55)}_${hash}`;
  }
  return candidate;
}

type Offered =
  | { source: 'toolkit'; tool: EnabledCustomTool }
  | { source: 'mcp-server'; tool: EnabledMcpServerTool }
  | { source: 'service'; tool: ServiceTool };

export interface ToolRun {
  source: ToolSource | null;
  target: { toolId?: number; serverId?: number; memberId?: number; tool: string } | null;
  arguments: unknown;
  outcome: ToolOutcome;
  /** Given back to the model. */
  result: string;
}

/** A tool that could not be run: the reply fails (retried when `retryable`). */
export class ToolFailure extends Error {
  constructor(
    readonly toolName: string,
    message: string,
    readonly retryable: boolean,
    readonly run: ToolRun,
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/** The tools one reply may use, under the names the model sees. */
export class OfferedTools {
  constructor(
    readonly workspaceId: string,
    private readonly byName: Map<string, Offered>,
    /** The chat's workflow agent member the service tools act as; null: none offered. */
    readonly agentMemberId: number | null = null,
    /**
     * Service tools the agent's role does not allow, under the names they would have: not
     * offered, but a call of one is put to the service, which refuses it naming the scope.
     */
    private readonly withheld = new Map<string, ServiceTool>(),
  ) {}

  get definitions(): ModelTool[] {
    return [...this.byName.entries()].map(([name, offered]) => ({
      name,
      description: descriptionOf(offered),
      parameters: { type: 'object', ...(offered.tool.inputSchema as Record<string, unknown>) },
    }));
  }

  /** Whether `name` is on offer to this reply (a withheld service tool is not). */
  offers(name: string): boolean {
    return this.byName.has(name);
  }

  get(name: string): Offered | undefined {
    const offered = this.byName.get(name);
    if (offered) return offered;
    const withheld = this.withheld.get(name);
    return withheld ? { source: 'service', tool: withheld } : undefined;
  }
}

function descriptionOf(offered: Offered): string {
  const t = offered.tool;
  if (offered.source === 'toolkit')
    return (t.description ?? (t as EnabledCustomTool).displayName).slice(0, 1024);
  if (offered.source === 'service') return offered.tool.description.slice(0, 1024);
  const m = t as EnabledMcpServerTool;
  return (m.description ?? m.title ?? m.name).slice(0, 1024);
}

/** The events that change which toolkit and MCP server tools a workspace has enabled. */
const TOOL_EVENT_TYPES: ReadonlySet<string> = new Set([
  ...CUSTOM_TOOLKIT_EVENT_TYPES,
  ...MCP_SERVER_EVENT_TYPES,
]);

const bounded = (text: string): string => storable(text, RESULT_MAX_CHARS);

/**
 * Gathers the tools a chat's assistant is offered (the workspace's enabled custom toolkit
 * tools, the tools of its enabled MCP servers, and the service's own tools as the chat's
 * workflow agent member may use them) and runs the model's calls of them.
 * Arguments and results are never logged: they may hold record values (PHI).
 */
@Injectable()
export class ToolBox {
  constructor(
    private readonly queries: QueryBus,
    private readonly commands: CommandBus,
    @Inject(LANGUAGE_MODEL) private readonly model: LanguageModel,
    private readonly cache: AuthCache,
    feed: CheckpointFeed,
  ) {
    // What tools an assistant may use: a toolkit's or MCP server's change ends the cached lists.
    feed.invalidateAuthOn((e) => TOOL_EVENT_TYPES.has(e.type));
  }

  /**
   * A workspace's enabled toolkit tools and MCP server tools, as their features' queries
   * answer, kept in core's AuthCache: every reply of a busy workspace asks for them, and
   * they change rarely. A toolkit's or MCP server's event ends the entries, in this
   * process and every other, once its read model has it (its projection's checkpoint
   * notice), and AUTH_CACHE_TTL_MS bounds them should a notice be lost.
   */
  private enabled<T>(kind: string, workspaceId: string, load: () => Promise<T[]>): Promise<T[]> {
    return this.cache.get(`assistant-${kind}:${workspaceId}`, load).then((tools) => tools ?? []);
  }

  /**
   * The tools of one reply. The service's own tools (the MCP endpoint's) only when the chat
   * runs a workflow: as its agent member, those its role's scopes allow.
   */
  async offer(workspaceId: string, agentMemberId: number | null = null): Promise<OfferedTools> {
    const [custom, mcp, service] = await Promise.all([
      this.enabled('custom-tools', workspaceId, () =>
        this.queries.execute<ListEnabledCustomToolsQuery, EnabledCustomTool[]>(
          new ListEnabledCustomToolsQuery(workspaceId),
        ),
      ),
      this.enabled('mcp-server-tools', workspaceId, () =>
        this.queries.execute<ListEnabledMcpServerToolsQuery, EnabledMcpServerTool[]>(
          new ListEnabledMcpServerToolsQuery(workspaceId),
        ),
      ),
      agentMemberId === null
        ? Promise.resolve([])
        : this.queries.execute<ListServiceToolsQuery, ServiceTool[]>(
            new ListServiceToolsQuery(workspaceId, agentMemberId),
          ),
    ]);
    const byName = new Map<string, Offered>();
    for (const tool of custom)
      byName.set(modelToolName(tool.toolkitSlug, tool.name, byName), { source: 'toolkit', tool });
    for (const tool of mcp)
      byName.set(modelToolName(`mcp_${tool.serverSlug}`, tool.name, byName), { source: 'mcp-server', tool });
    const withheld = new Map<string, ServiceTool>();
    const taken = { has: (n: string) => byName.has(n) || withheld.has(n) };
    for (const tool of service) {
      const name = modelToolName('svc', tool.name, taken);
      if (tool.granted) byName.set(name, { source: 'service', tool });
      else withheld.set(name, tool);
    }
    return new OfferedTools(workspaceId, byName, agentMemberId, withheld);
  }

  /**
   * Runs one call; answers what to give the model back, or throws ToolFailure. Either way
   * its result is storable text (see `storable`).
   */
  async run(tools: OfferedTools, name: string, rawArguments: string): Promise<ToolRun> {
    try {
      const run = await this.runCall(tools, name, rawArguments);
      return { ...run, result: storable(run.result) };
    } catch (error) {
      if (error instanceof ToolFailure) error.run.result = storable(error.run.result);
      throw error;
    }
  }

  private async runCall(tools: OfferedTools, name: string, rawArguments: string): Promise<ToolRun> {
    const offered = tools.get(name);
    const parsed = parseArguments(rawArguments);
    const shownName = storable(name, 64);
    if (!offered)
      return {
        source: null,
        target: null,
        arguments: parsed.ok ? parsed.value : parsed.kept,
        outcome: 'refused',
        result: `error: no tool named ${shownName} is available to this assistant`,
      };
    const target =
      offered.source === 'toolkit'
        ? { toolId: offered.tool.toolId, tool: offered.tool.name }
        : offered.source === 'mcp-server'
          ? { serverId: offered.tool.serverId, tool: offered.tool.name }
          : { memberId: tools.agentMemberId ?? undefined, tool: offered.tool.name };
    const base = { source: offered.source, target };
    if (!parsed.ok)
      return {
        ...base,
        arguments: parsed.kept,
        outcome: 'invalid_arguments',
        result: `error: ${parsed.error}`,
      };
    if (offered.source === 'toolkit')
      return this.runCustom(tools.workspaceId, offered.tool, parsed.value, base, name);
    if (offered.source === 'mcp-server')
      return this.runMcp(tools.workspaceId, offered.tool, parsed.value, base, name);
    return this.runService(tools, offered.tool, parsed.value, base, name);
  }

  /**
   * A service tool, run by the mcp feature as the chat's agent member (its role's scopes,
   * the route's rules, events with the member as actor). Refusals and the route's errors
   * go back to the model; a 5xx fails the reply (retried).
   */
  private async runService(
    tools: OfferedTools,
    tool: ServiceTool,
    args: Record<string, unknown>,
    base: Pick<ToolRun, 'source' | 'target'>,
    name: string,
  ): Promise<ToolRun> {
    if (tools.agentMemberId === null)
      return {
        ...base,
        arguments: args,
        outcome: 'refused',
        result: `error: no tool named ${name} is available to this assistant`,
      };
    const answer = await this.commands.execute<CallServiceToolCommand, ServiceToolAnswer>(
      new CallServiceToolCommand(tools.workspaceId, tools.agentMemberId, tool.name, args),
    );
    if (answer.outcome === 'ok')
      return {
        ...base,
        arguments: args,
        outcome: 'ok',
        result: bounded(JSON.stringify(answer.body ?? null)),
      };
    const result = `error: ${answer.status}: ${answer.detail}`;
    if (answer.outcome === 'failed')
      throw new ToolFailure(name, result.slice(7, 507), true, {
        ...base,
        arguments: args,
        outcome: 'failed',
        result,
      });
    return { ...base, arguments: args, outcome: answer.outcome, result };
  }

  private async runCustom(
    workspaceId: string,
    tool: EnabledCustomTool,
    args: Record<string, unknown>,
    base: Pick<ToolRun, 'source' | 'target'>,
    name: string,
  ): Promise<ToolRun> {
    let validated: ValidatedToolCall;
    try {
      validated = await this.queries.execute(
        new ValidateCustomToolArgumentsQuery(workspaceId, tool.toolId, args),
      );
    } catch (error) {
      if (error instanceof ValidationError)
        return { ...base, arguments: args, outcome: 'invalid_arguments', result: `error: ${error.message}` };
      if (error instanceof NotFoundError)
        return {
          ...base,
          arguments: args,
          outcome: 'refused',
          result: `error: the tool ${name} no longer exists`,
        };
      throw error;
    }
    if (!validated.toolkitEnabled)
      return { ...base, arguments: args, outcome: 'refused', result: `error: the tool ${name} is disabled` };
    try {
      const answer = await this.model.complete({
        model: tool.chatModel ?? undefined,
        messages: [
          { role: 'system', content: tool.prompt ?? tool.description ?? tool.displayName },
          { role: 'user', content: JSON.stringify(validated.arguments) },
        ],
      });
      return {
        ...base,
        arguments: validated.arguments,
        outcome: 'ok',
        result: bounded(answer.content ?? ''),
      };
    } catch (error) {
      const retryable = error instanceof ModelError ? error.retryable : true;
      const message = error instanceof Error ? error.message : 'the tool failed';
      throw new ToolFailure(name, message, retryable, {
        ...base,
        arguments: validated.arguments,
        outcome: 'failed',
        result: `error: ${message}`,
      });
    }
  }

  private async runMcp(
    workspaceId: string,
    tool: EnabledMcpServerTool,
    args: Record<string, unknown>,
    base: Pick<ToolRun, 'source' | 'target'>,
    name: string,
  ): Promise<ToolRun> {
    try {
      const result = await this.commands.execute<CallMcpServerToolCommand, McpToolResult>(
        new CallMcpServerToolCommand(workspaceId, tool.serverId, tool.name, args),
      );
      const text = result.text || (result.structuredContent ? JSON.stringify(result.structuredContent) : '');
      return {
        ...base,
        arguments: args,
        outcome: result.isError ? 'error' : 'ok',
        result: bounded(result.isError ? `error: ${text}` : text),
      };
    } catch (error) {
      const message =
        error instanceof McpToolCallFailed ? `${error.reason}: ${error.message}` : String(error);
      throw new ToolFailure(name, message.slice(0, 500), true, {
        ...base,
        arguments: args,
        outcome: 'failed',
        result: `error: ${message.slice(0, 500)}`,
      });
    }
  }
}

/**
 * The model's arguments text as a JSON object the tools may take: at most
 * ARGUMENTS_MAX_CHARS, nested at most as deep as a request body, with no string a request
 * body could not hold (NUL, half a surrogate pair). Otherwise the error for the model, and
 * what of the text the call's event keeps (storable, at most REFUSED_ARGUMENTS_KEPT).
 */
export function parseArguments(
  raw: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string; kept: string } {
  if (raw.trim() === '') return { ok: true, value: {} };
  const refused = (error: string) => ({
    ok: false as const,
    error,
    kept: storable(raw, REFUSED_ARGUMENTS_KEPT),
  });
  if (raw.length > ARGUMENTS_MAX_CHARS)
    return refused(
      `the arguments are ${raw.length} characters long, more than the ${ARGUMENTS_MAX_CHARS} a tool takes; call it again with shorter arguments`,
    );
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? storable(error.message, 200) : 'malformed JSON';
    return refused(`the arguments are not a JSON object (${reason}); call the tool again with valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return refused(
      'the arguments are not a JSON object (not an object); call the tool again with valid JSON',
    );
  const problem = findInputProblem(value, (path) => (path ? `arguments.${path}` : 'arguments'));
  if (problem) return refused(`${problem}; call the tool again with valid arguments`);
  return { ok: true, value: value as Record<string, unknown> };
}
