import { Decider } from '../../../core/cqrs/decider';
import { assertIfMatch, optionalText, requiredText } from '../../../core/cqrs/fields';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { canonicalJson } from '../../../core/http/idempotency';
import { checkInputSchema } from './input-schema';
import type {
  CustomToolChanges,
  CustomToolFields,
  CustomToolkitChanges,
  CustomToolkitEvent,
  JsonSchemaObject,
} from './toolkit.events';

export const TOOLKIT_NAME_MAX = 200;
export const TOOLKIT_SLUG_MAX = 100;
export const DESCRIPTION_MAX = 10_000;
/** Lower-case letters, digits, `-` and `_`, starting with a letter or digit (like task slugs). */
export const TOOLKIT_SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
/** What MCP allows as a tool name: a letter, then up to 63 letters, digits, `_` or `-`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
export const TOOL_DISPLAY_NAME_MAX = 200;
export const TOOL_PROMPT_MAX = 50_000;
export const TOOL_CHAT_MODEL_MAX = 200;
/**
 * Tools per toolkit. A toolkit and its tools are one stream, loaded for every change of
 * any of them; this bound (with the schema's) keeps that load small.
 */
export const TOOLKIT_MAX_TOOLS = 100;
/** The input schema of a tool created without one: no arguments. */
export const EMPTY_INPUT_SCHEMA: JsonSchemaObject = { type: 'object', properties: {} };

export interface ToolkitSnapshot {
  id: number;
  workspaceId: string;
  name: string;
  slug: string;
  description: string | null;
  enabled: boolean;
  /** Changes the toolkit shows (its ETag); the tools' changes are theirs. */
  version: number;
}

export interface ToolSnapshot extends CustomToolFields {
  id: number;
  version: number;
}

export type CustomToolkitState =
  | { status: 'none' }
  | { status: 'live'; toolkit: ToolkitSnapshot; tools: Readonly<Record<number, ToolSnapshot>> }
  | { status: 'deleted' };

export interface ToolkitInput {
  name: string;
  slug: string;
  description?: string | null;
}

export interface ToolInput {
  name: string;
  displayName?: string;
  description?: string | null;
  prompt?: string | null;
  chatModel?: string | null;
  inputSchema?: unknown;
}

export interface ToolUpdateInput {
  name?: string;
  displayName?: string;
  description?: string | null;
  prompt?: string | null;
  chatModel?: string | null;
  inputSchema?: unknown;
}

interface Target {
  toolkitId: number;
  workspaceId: string;
  now: string;
}

/** If-Match: the versions the write may apply to (undefined: any). */
type Conditional = { ifMatch?: number[] };

export type CustomToolkitCommand =
  | ({ type: 'CreateToolkit' } & Target & ToolkitInput)
  | ({ type: 'UpdateToolkit' } & Target & Conditional & Partial<ToolkitInput>)
  | ({ type: 'EnableToolkit' } & Target)
  | ({ type: 'DisableToolkit' } & Target)
  | ({ type: 'DeleteToolkit' } & Target & Conditional)
  | ({ type: 'CreateTool'; toolId: number } & Target & ToolInput)
  | ({ type: 'UpdateTool'; toolId: number } & Target & Conditional & ToolUpdateInput)
  | ({ type: 'DeleteTool'; toolId: number } & Target & Conditional);

function slugOf(raw: string): string {
  if (raw.length > TOOLKIT_SLUG_MAX || !TOOLKIT_SLUG_PATTERN.test(raw))
    throw new ValidationError(
      `slug: must be 1-${TOOLKIT_SLUG_MAX} lower-case letters, digits, "-" or "_", starting with a letter or digit`,
    );
  return raw;
}

function toolNameOf(raw: string): string {
  if (!TOOL_NAME_PATTERN.test(raw))
    throw new ValidationError(
      'name: must be a letter followed by up to 63 letters, digits, "_" or "-" (^[a-zA-Z][a-zA-Z0-9_-]{0,63}$)',
    );
  return raw;
}

/** Tool names are unique in their toolkit regardless of case: `Lookup` and `lookup` would confuse agents. */
function assertNameFree(tools: Readonly<Record<number, ToolSnapshot>>, name: string, self?: number): void {
  const other = Object.values(tools).find(
    (t) => t.id !== self && t.name.toLowerCase() === name.toLowerCase(),
  );
  if (other)
    throw new ConflictError(`name: tool ${other.id} of this toolkit is already named "${other.name}"`);
}

function liveToolkit(state: CustomToolkitState, workspaceId: string) {
  if (state.status !== 'live' || state.toolkit.workspaceId !== workspaceId)
    throw new NotFoundError('Custom toolkit not found');
  return state;
}

function liveTool(state: CustomToolkitState, workspaceId: string, toolId: number): ToolSnapshot {
  const tool = liveToolkit(state, workspaceId).tools[toolId];
  if (!tool) throw new NotFoundError('Tool not found');
  return tool;
}

/** Equal as JSON data: the store keeps JSON as `jsonb`, which does not keep the order of keys. */
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

function withTool(
  tools: Readonly<Record<number, ToolSnapshot>>,
  tool: ToolSnapshot | undefined,
  toolId: number,
): Record<number, ToolSnapshot> {
  const next = { ...tools };
  if (tool) next[toolId] = tool;
  else delete next[toolId];
  return next;
}

export const customToolkitDecider: Decider<CustomToolkitState, CustomToolkitCommand, CustomToolkitEvent> = {
  initialState: () => ({ status: 'none' }),

  evolve(state, event) {
    if (event.type === 'CustomToolkitCreated') {
      const d = event.data;
      return {
        status: 'live',
        toolkit: {
          id: d.toolkitId,
          workspaceId: d.workspaceId,
          name: d.name,
          slug: d.slug,
          description: d.description,
          enabled: d.enabled,
          version: 1,
        },
        tools: {},
      };
    }
    if (state.status !== 'live') return state;
    const { toolkit, tools } = state;
    switch (event.type) {
      case 'CustomToolkitUpdated':
        return { ...state, toolkit: { ...toolkit, ...event.data.changes, version: toolkit.version + 1 } };
      case 'CustomToolkitEnabled':
        return { ...state, toolkit: { ...toolkit, enabled: true, version: toolkit.version + 1 } };
      case 'CustomToolkitDisabled':
        return { ...state, toolkit: { ...toolkit, enabled: false, version: toolkit.version + 1 } };
      case 'CustomToolkitDeleted':
        return { status: 'deleted' };
      case 'CustomToolCreated': {
        const tool = { ...event.data.tool, id: event.data.toolId, version: 1 };
        return { ...state, tools: withTool(tools, tool, tool.id) };
      }
      case 'CustomToolUpdated': {
        const before = tools[event.data.toolId];
        if (!before) return state;
        const tool = { ...before, ...event.data.changes, version: before.version + 1 };
        return { ...state, tools: withTool(tools, tool, tool.id) };
      }
      case 'CustomToolDeleted':
        return { ...state, tools: withTool(tools, undefined, event.data.toolId) };
    }
  },

  decide(command, state) {
    const { toolkitId, workspaceId, now } = command;
    switch (command.type) {
      case 'CreateToolkit': {
        if (state.status !== 'none') throw new ConflictError('A custom toolkit with this id already exists');
        return [
          {
            type: 'CustomToolkitCreated',
            data: {
              toolkitId,
              workspaceId,
              name: requiredText('name', command.name, TOOLKIT_NAME_MAX),
              slug: slugOf(command.slug),
              description: optionalText('description', command.description, DESCRIPTION_MAX),
              enabled: true,
              createdAt: now,
            },
          },
        ];
      }
      case 'UpdateToolkit': {
        const { toolkit } = liveToolkit(state, workspaceId);
        assertIfMatch(command.ifMatch, toolkit.version);
        const changes: CustomToolkitChanges = {};
        if (command.name !== undefined) {
          const name = requiredText('name', command.name, TOOLKIT_NAME_MAX);
          if (name !== toolkit.name) changes.name = name;
        }
        if (command.slug !== undefined) {
          const slug = slugOf(command.slug);
          if (slug !== toolkit.slug) changes.slug = slug;
        }
        if (command.description !== undefined) {
          const description = optionalText('description', command.description, DESCRIPTION_MAX);
          if (description !== toolkit.description) changes.description = description;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'CustomToolkitUpdated',
            data: {
              toolkitId,
              workspaceId,
              changes,
              ...(changes.slug !== undefined ? { previousSlug: toolkit.slug } : {}),
              updatedAt: now,
            },
          },
        ];
      }
      case 'EnableToolkit': {
        const { toolkit } = liveToolkit(state, workspaceId);
        if (toolkit.enabled) return [];
        return [{ type: 'CustomToolkitEnabled', data: { toolkitId, workspaceId, enabledAt: now } }];
      }
      case 'DisableToolkit': {
        const { toolkit } = liveToolkit(state, workspaceId);
        if (!toolkit.enabled) return [];
        return [{ type: 'CustomToolkitDisabled', data: { toolkitId, workspaceId, disabledAt: now } }];
      }
      case 'DeleteToolkit': {
        const { toolkit, tools } = liveToolkit(state, workspaceId);
        assertIfMatch(command.ifMatch, toolkit.version);
        // Its tools go with it, each with its own event, in the same append.
        return [
          ...Object.values(tools)
            .sort((a, b) => a.id - b.id)
            .map((t) => ({
              type: 'CustomToolDeleted' as const,
              data: { toolkitId, workspaceId, toolId: t.id, name: t.name, deletedAt: now },
            })),
          {
            type: 'CustomToolkitDeleted',
            data: { toolkitId, workspaceId, slug: toolkit.slug, deletedAt: now },
          },
        ];
      }
      case 'CreateTool': {
        const { tools } = liveToolkit(state, workspaceId);
        if (tools[command.toolId]) throw new ConflictError('A tool with this id already exists');
        if (Object.keys(tools).length >= TOOLKIT_MAX_TOOLS)
          throw new ValidationError(`name: a toolkit holds at most ${TOOLKIT_MAX_TOOLS} tools`);
        const name = toolNameOf(command.name);
        assertNameFree(tools, name);
        const tool: CustomToolFields = {
          name,
          displayName:
            command.displayName === undefined
              ? name
              : requiredText('displayName', command.displayName, TOOL_DISPLAY_NAME_MAX),
          description: optionalText('description', command.description, DESCRIPTION_MAX),
          prompt: optionalText('prompt', command.prompt, TOOL_PROMPT_MAX),
          chatModel:
            command.chatModel === undefined || command.chatModel === null
              ? null
              : requiredText('chatModel', command.chatModel, TOOL_CHAT_MODEL_MAX),
          inputSchema:
            command.inputSchema === undefined ? EMPTY_INPUT_SCHEMA : checkInputSchema(command.inputSchema),
        };
        return [
          {
            type: 'CustomToolCreated',
            data: { toolkitId, workspaceId, toolId: command.toolId, tool, createdAt: now },
          },
        ];
      }
      case 'UpdateTool': {
        const tool = liveTool(state, workspaceId, command.toolId);
        assertIfMatch(command.ifMatch, tool.version);
        const changes: CustomToolChanges = {};
        if (command.name !== undefined) {
          const name = toolNameOf(command.name);
          if (name !== tool.name) {
            assertNameFree(liveToolkit(state, workspaceId).tools, name, tool.id);
            changes.name = name;
          }
        }
        if (command.displayName !== undefined) {
          const displayName = requiredText('displayName', command.displayName, TOOL_DISPLAY_NAME_MAX);
          if (displayName !== tool.displayName) changes.displayName = displayName;
        }
        if (command.description !== undefined) {
          const description = optionalText('description', command.description, DESCRIPTION_MAX);
          if (description !== tool.description) changes.description = description;
        }
        if (command.prompt !== undefined) {
          const prompt = optionalText('prompt', command.prompt, TOOL_PROMPT_MAX);
          if (prompt !== tool.prompt) changes.prompt = prompt;
        }
        if (command.chatModel !== undefined) {
          const chatModel =
            command.chatModel === null
              ? null
              : requiredText('chatModel', command.chatModel, TOOL_CHAT_MODEL_MAX);
          if (chatModel !== tool.chatModel) changes.chatModel = chatModel;
        }
        if (command.inputSchema !== undefined) {
          const inputSchema = checkInputSchema(command.inputSchema);
          if (!sameJson(inputSchema, tool.inputSchema)) changes.inputSchema = inputSchema;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'CustomToolUpdated',
            data: { toolkitId, workspaceId, toolId: tool.id, changes, updatedAt: now },
          },
        ];
      }
      case 'DeleteTool': {
        const tool = liveTool(state, workspaceId, command.toolId);
        assertIfMatch(command.ifMatch, tool.version);
        return [
          {
            type: 'CustomToolDeleted',
            data: { toolkitId, workspaceId, toolId: tool.id, name: tool.name, deletedAt: now },
          },
        ];
      }
    }
  },
};
