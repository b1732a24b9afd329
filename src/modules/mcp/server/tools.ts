/**
 * The MCP tools of the service's own endpoint. Each one names the REST route it mirrors
 * and the scope that route requires: the tool is listed only to a caller holding that
 * scope, and a call is the REST route itself (see mcp-dispatch.ts), so it runs the same
 * command or query, obeys the same rules and emits the same events.
 */

type JsonSchema = Record<string, unknown>;

export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** The scope of the REST route it mirrors (its @RequireScope). */
  scope: string;
  method: 'GET' | 'POST' | 'PUT';
  /** The route below the API prefix; `{name}` segments are filled from the arguments. */
  path: string;
  /** Arguments sent as the query string (the rest, beyond path parameters, is the body). */
  query?: readonly string[];
  /** Arguments sent as the JSON body; `undefined`: none. */
  body?: readonly string[];
  /** The body's own fields, described for the caller (the REST route validates them). */
  properties: Record<string, JsonSchema>;
  required: readonly string[];
  output: JsonSchema;
}

const id = (description: string): JsonSchema => ({ type: 'integer', minimum: 1, description });
const PAGE: Record<string, JsonSchema> = {
  page: { type: 'integer', minimum: 1, description: 'page number, from 1' },
  pageSize: { type: 'integer', minimum: 1, maximum: 1000, description: 'items per page (default 50)' },
  search: { type: 'string', description: 'text to look for' },
};
const PAGE_KEYS = ['page', 'pageSize', 'search'] as const;
const OBJECT: JsonSchema = { type: 'object', additionalProperties: true };
const LIST: JsonSchema = {
  type: 'object',
  properties: {
    items: { type: 'array', items: OBJECT },
    total: { type: 'integer' },
    page: { type: 'integer' },
    pageSize: { type: 'integer' },
  },
  required: ['items', 'total', 'page', 'pageSize'],
};
const FIELD_VALUES: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  description: 'values by field slug, as the data type declares them',
};

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'members.search',
    title: 'Search members',
    description: 'List the workspace members, optionally matching a search text (GET /w/{wid}/members).',
    scope: 'members:read',
    method: 'GET',
    path: '/w/{wid}/members',
    query: PAGE_KEYS,
    properties: { ...PAGE },
    required: [],
    output: LIST,
  },
  {
    name: 'members.get',
    title: 'Get a member',
    description: 'One member of the workspace (GET /w/{wid}/members/{memberId}).',
    scope: 'members:read',
    method: 'GET',
    path: '/w/{wid}/members/{memberId}',
    properties: { memberId: id('the member') },
    required: ['memberId'],
    output: OBJECT,
  },
  {
    name: 'datatypes.list',
    title: 'List data types',
    description: 'The data types (record forms) of the workspace (GET /w/{wid}/data-types).',
    scope: 'datatypes:read',
    method: 'GET',
    path: '/w/{wid}/data-types',
    query: PAGE_KEYS,
    properties: { ...PAGE },
    required: [],
    output: LIST,
  },
  {
    name: 'datatypes.get',
    title: 'Get a data type',
    description: 'One data type with its fields (GET /w/{wid}/data-types/{dataTypeId}).',
    scope: 'datatypes:read',
    method: 'GET',
    path: '/w/{wid}/data-types/{dataTypeId}',
    properties: { dataTypeId: id('the data type') },
    required: ['dataTypeId'],
    output: OBJECT,
  },
  {
    name: 'records.search',
    title: 'Search records',
    description:
      'Records of a data type, by search text, member or external id (GET /w/{wid}/data-types/{dataTypeId}/records).',
    scope: 'records:read',
    method: 'GET',
    path: '/w/{wid}/data-types/{dataTypeId}/records',
    query: [...PAGE_KEYS, 'memberId', 'externalId'],
    properties: {
      dataTypeId: id('the data type'),
      ...PAGE,
      memberId: id('only records of this member'),
      externalId: { type: 'string', description: 'only the record with this external id' },
    },
    required: ['dataTypeId'],
    output: LIST,
  },
  {
    name: 'records.get',
    title: 'Get a record',
    description: 'One record (GET /w/{wid}/data-types/{dataTypeId}/records/{recordId}).',
    scope: 'records:read',
    method: 'GET',
    path: '/w/{wid}/data-types/{dataTypeId}/records/{recordId}',
    properties: { dataTypeId: id('the data type'), recordId: id('the record') },
    required: ['dataTypeId', 'recordId'],
    output: OBJECT,
  },
  {
    name: 'records.create',
    title: 'Create a record',
    description: 'A new record of a data type (POST /w/{wid}/data-types/{dataTypeId}/records).',
    scope: 'records:write',
    method: 'POST',
    path: '/w/{wid}/data-types/{dataTypeId}/records',
    body: ['fieldValues', 'memberId', 'externalId'],
    properties: {
      dataTypeId: id('the data type'),
      fieldValues: FIELD_VALUES,
      memberId: id('the member the record belongs to'),
      externalId: { type: 'string', description: "the caller's own id for the record" },
    },
    required: ['dataTypeId', 'fieldValues'],
    output: OBJECT,
  },
  {
    name: 'records.update',
    title: 'Update a record',
    description: 'Change field values of a record (PUT /w/{wid}/data-types/{dataTypeId}/records/{recordId}).',
    scope: 'records:write',
    method: 'PUT',
    path: '/w/{wid}/data-types/{dataTypeId}/records/{recordId}',
    body: ['fieldValues'],
    properties: { dataTypeId: id('the data type'), recordId: id('the record'), fieldValues: FIELD_VALUES },
    required: ['dataTypeId', 'recordId', 'fieldValues'],
    output: OBJECT,
  },
  {
    name: 'records.upsert',
    title: 'Create or update a record by external id',
    description:
      'The record with this external id, created or updated (POST /w/{wid}/data-types/{dataTypeId}/upsert/{externalId}).',
    scope: 'records:write',
    method: 'POST',
    path: '/w/{wid}/data-types/{dataTypeId}/upsert/{externalId}',
    body: ['fieldValues', 'memberId'],
    properties: {
      dataTypeId: id('the data type'),
      externalId: { type: 'string', minLength: 1, description: "the caller's own id for the record" },
      fieldValues: FIELD_VALUES,
      memberId: id('the member the record belongs to'),
    },
    required: ['dataTypeId', 'externalId', 'fieldValues'],
    output: OBJECT,
  },
  {
    name: 'chats.list',
    title: 'List chats',
    description: 'The chats of the workspace the caller may read (GET /w/{wid}/chats).',
    scope: 'chats:read',
    method: 'GET',
    path: '/w/{wid}/chats',
    query: [...PAGE_KEYS, 'memberId'],
    properties: { ...PAGE, memberId: id('only chats of this member') },
    required: [],
    output: LIST,
  },
  {
    name: 'chats.messages',
    title: 'Read chat messages',
    description: 'The messages of a chat (GET /w/{wid}/chats/{chatId}/messages).',
    scope: 'chats:read',
    method: 'GET',
    path: '/w/{wid}/chats/{chatId}/messages',
    query: ['page', 'pageSize'],
    properties: { chatId: id('the chat'), page: PAGE.page, pageSize: PAGE.pageSize },
    required: ['chatId'],
    output: LIST,
  },
  {
    name: 'chats.send_assistant_message',
    title: 'Send an assistant message',
    description:
      "A message in the chat from the chat's assistant (POST /w/{wid}/chats/{chatId}/send-assistant-message).",
    scope: 'chats:write',
    method: 'POST',
    path: '/w/{wid}/chats/{chatId}/send-assistant-message',
    body: ['message'],
    properties: { chatId: id('the chat'), message: { type: 'string', minLength: 1 } },
    required: ['chatId', 'message'],
    output: OBJECT,
  },
  {
    name: 'tasks.list',
    title: 'List tasks',
    description: 'The tasks of the workspace (GET /w/{wid}/tasks).',
    scope: 'assignments:read',
    method: 'GET',
    path: '/w/{wid}/tasks',
    query: [...PAGE_KEYS, 'status', 'assignee', 'priority'],
    properties: {
      ...PAGE,
      status: { type: 'string' },
      assignee: id('only tasks assigned to this member'),
      priority: { type: 'string' },
    },
    required: [],
    output: LIST,
  },
  {
    name: 'tasks.create',
    title: 'Create a task',
    description: 'A new task (POST /w/{wid}/tasks; the body as that route takes it).',
    scope: 'assignments:write',
    method: 'POST',
    path: '/w/{wid}/tasks',
    body: ['name', 'title', 'slug', 'description', 'workflowId', 'priority', 'assignees', 'dueAt'],
    properties: {
      name: { type: 'string', minLength: 1 },
      title: { type: 'string' },
      slug: { type: 'string' },
      description: { type: 'string' },
      workflowId: { type: 'integer' },
      priority: { type: 'string' },
      assignees: { type: 'array', items: { type: 'integer' }, description: 'member ids' },
      dueAt: { type: 'string', format: 'date-time' },
    },
    required: ['name'],
    output: OBJECT,
  },
  {
    name: 'tasks.update',
    title: 'Update a task',
    description: 'Change a task (PUT /w/{wid}/tasks/{taskId}).',
    scope: 'assignments:write',
    method: 'PUT',
    path: '/w/{wid}/tasks/{taskId}',
    body: ['name', 'title', 'description', 'status', 'priority', 'assignees', 'dueAt'],
    properties: {
      taskId: id('the task'),
      name: { type: 'string', minLength: 1 },
      title: { type: 'string' },
      description: { type: 'string' },
      status: { type: 'string' },
      priority: { type: 'string' },
      assignees: { type: 'array', items: { type: 'integer' }, description: 'member ids' },
      dueAt: { type: 'string', format: 'date-time' },
    },
    required: ['taskId'],
    output: OBJECT,
  },
  {
    name: 'calendar_events.list',
    title: 'List calendar events in a window',
    description: 'Calendar events between startTime and endTime (GET /w/{wid}/calendar-events).',
    scope: 'calendars:read',
    method: 'GET',
    path: '/w/{wid}/calendar-events',
    query: ['page', 'pageSize', 'startTime', 'endTime', 'calendarId', 'attendeeMemberId'],
    properties: {
      page: PAGE.page,
      pageSize: PAGE.pageSize,
      startTime: { type: 'string', format: 'date-time', description: 'window start (ISO 8601)' },
      endTime: { type: 'string', format: 'date-time', description: 'window end (ISO 8601)' },
      calendarId: id('only events of this calendar'),
      attendeeMemberId: id('only events this member attends'),
    },
    required: [],
    output: LIST,
  },
  {
    name: 'calendar_events.create',
    title: 'Create a calendar event',
    description: 'A new calendar event (POST /w/{wid}/calendar-events).',
    scope: 'calendars:write',
    method: 'POST',
    path: '/w/{wid}/calendar-events',
    body: ['title', 'startTime', 'endTime', 'calendarId', 'attendeeMemberIds', 'description'],
    properties: {
      title: { type: 'string', minLength: 1 },
      startTime: { type: 'string', format: 'date-time' },
      endTime: { type: 'string', format: 'date-time' },
      calendarId: { type: 'integer' },
      attendeeMemberIds: { type: 'array', items: { type: 'integer' } },
      description: { type: 'string' },
    },
    required: ['title', 'startTime'],
    output: OBJECT,
  },
];

const WORKSPACE_ARG: JsonSchema = {
  type: 'string',
  format: 'uuid',
  description:
    'the workspace to act in; an OAuth token is bound to the one chosen at consent (the default), an API key needs it',
};

/** The JSON Schema of a tool's arguments as tools/list shows it. */
export function inputSchemaOf(tool: McpTool, workspaceBound: boolean): JsonSchema {
  return {
    type: 'object',
    properties: { workspaceId: WORKSPACE_ARG, ...tool.properties },
    required: workspaceBound ? [...tool.required] : ['workspaceId', ...tool.required],
    additionalProperties: false,
  };
}

/** The path parameters a tool's route names, `wid` aside. */
export function pathParams(tool: McpTool): string[] {
  return [...tool.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => p !== 'wid');
}
