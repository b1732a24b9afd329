import type { Type } from '@nestjs/common';
import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Principal } from '../../../core/auth/principal';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import {
  CreateCalendarEventCommand,
  CreateCalendarEventDto,
  GetCalendarEventQuery,
  ListCalendarEventsQuery,
  ListCalendarEventsQueryDto,
  calendarCallerOf,
} from '../../calendars';
import {
  GetMemberQuery,
  ListMembersQuery,
  ListMembersQueryDto,
  MEMBER_STATUS_FILTERS,
  memberCallerOf,
  memberIdOf,
  memberVisibilityOf,
} from '../../identity';
import {
  ChatListQueryDto,
  GetMessageQuery,
  ListChatsQuery,
  ListMessagesQuery,
  MESSAGE_MAX,
  SendAssistantMessageCommand,
  SendAssistantMessageDto,
  chatCallerOf,
  chatPathId,
} from '../../messaging';
import {
  CreateRecordCommand,
  CreateRecordDto,
  GetDataTypeQuery,
  GetRecordQuery,
  ListDataTypesQuery,
  ListRecordsQuery,
  ListRecordsQueryDto,
  RecordResponse,
  UpdateRecordCommand,
  UpdateRecordDto,
  UpsertOutcome,
  UpsertRecordCommand,
  UpsertRecordDto,
  recordCallerOf,
  recordPathId,
} from '../../records';
import {
  CreateTaskCommand,
  CreateTaskDto,
  GetTaskQuery,
  ListTasksQuery,
  ListTasksQueryDto,
  UpdateTaskCommand,
  UpdateTaskDto,
  workCallerOf,
  workPathId,
} from '../../work';

/**
 * The MCP tools of the service's own endpoint. Each one mirrors a REST route: it needs
 * that route's scope (listed only to a caller holding it), and its call runs what the
 * route's handler runs — the same body or query DTO through the same validation pipe, the
 * same commands and queries through the buses, with the caller's principal in that
 * workspace — so it obeys the same rules and emits the same events, without a second
 * HTTP round (see tool-dispatch.ts).
 */

type JsonSchema = Record<string, unknown>;

/** One tool call as a tool's `run` sees it: the workspace, the caller there, and its arguments as the route would read them. */
export interface ToolCall {
  workspaceId: string;
  principal: Principal;
  commands: CommandBus;
  queries: QueryBus;
  /** A path argument as the route's path parameter carries it (its presence is checked before). */
  param(name: string): string;
  /** The tool's `query` arguments, as a query string carries them, through the route's query DTO and the validation pipe. */
  query<T>(dto: Type<T>): Promise<T>;
  /** The tool's `body` arguments through the route's body DTO and the validation pipe. */
  body<T>(dto: Type<T>): Promise<T>;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** The scope of the REST route it mirrors (its @RequireScope). */
  scope: string;
  /**
   * The route is open to self-access (@SelfAccess): the guard does not check the scope,
   * the handler's policy decides. Otherwise the call needs the scope in the workspace
   * (the credential's ∩ the member's role), as the guard requires it.
   */
  selfAccess: boolean;
  readOnly: boolean;
  /** The route's path parameters (`wid` aside), required arguments. */
  params: readonly string[];
  /** Arguments the route reads from its query string. */
  query?: readonly string[];
  /** Arguments the route reads from its JSON body; `undefined`: none. */
  body?: readonly string[];
  /** The arguments, described for the caller (the route's DTO validates them). */
  properties: Record<string, JsonSchema>;
  required: readonly string[];
  output: JsonSchema;
  /** What the route's handler runs; its answer is the route's body. */
  run(call: ToolCall): Promise<unknown>;
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
    selfAccess: false,
    readOnly: true,
    params: [],
    // The route's filters too: a filter the tool did not take would be ignored, answering more than asked.
    query: [...PAGE_KEYS, 'status', 'externalId', 'roleId'],
    properties: {
      ...PAGE,
      status: { type: 'string', enum: [...MEMBER_STATUS_FILTERS], description: 'default active' },
      externalId: { type: 'string', description: 'only the member with this external id' },
      roleId: id('only members of this role'),
    },
    required: [],
    output: LIST,
    async run({ workspaceId, principal, queries, query }) {
      const q = await query(ListMembersQueryDto);
      const filters = {
        externalId: q.externalId,
        roleId: q.roleId ?? q.memberRoleId,
        status: q.status ?? 'active',
      };
      // The route sends PostgreSQL's JSON text as its body; the tool's answer is that body.
      const page = await queries.execute<ListMembersQuery, unknown>(
        new ListMembersQuery(workspaceId, filters, memberVisibilityOf(principal), toPageRequest(q)),
      );
      return typeof page === 'string' ? (JSON.parse(page) as unknown) : page;
    },
  },
  {
    name: 'members.get',
    title: 'Get a member',
    description: 'One member of the workspace (GET /w/{wid}/members/{memberId}).',
    scope: 'members:read',
    selfAccess: true,
    readOnly: true,
    params: ['memberId'],
    properties: { memberId: id('the member') },
    required: ['memberId'],
    output: OBJECT,
    run({ workspaceId, principal, queries, param }) {
      return queries.execute(
        new GetMemberQuery(workspaceId, memberIdOf(param('memberId')), memberVisibilityOf(principal), {
          caller: memberCallerOf(principal),
          scope: 'members:read',
        }),
      );
    },
  },
  {
    name: 'datatypes.list',
    title: 'List data types',
    description: 'The data types (record forms) of the workspace (GET /w/{wid}/data-types).',
    scope: 'datatypes:read',
    selfAccess: true,
    readOnly: true,
    params: [],
    query: PAGE_KEYS,
    properties: { ...PAGE },
    required: [],
    output: LIST,
    async run({ workspaceId, principal, queries, query }) {
      const q = await query(PageQueryDto);
      return queries.execute(
        new ListDataTypesQuery(workspaceId, toPageRequest(q), recordCallerOf(principal)),
      );
    },
  },
  {
    name: 'datatypes.get',
    title: 'Get a data type',
    description: 'One data type with its fields (GET /w/{wid}/data-types/{dataTypeId}).',
    scope: 'datatypes:read',
    selfAccess: true,
    readOnly: true,
    params: ['dataTypeId'],
    properties: { dataTypeId: id('the data type') },
    required: ['dataTypeId'],
    output: OBJECT,
    run({ workspaceId, principal, queries, param }) {
      return queries.execute(
        new GetDataTypeQuery(
          workspaceId,
          recordPathId(param('dataTypeId'), 'Data type'),
          recordCallerOf(principal),
        ),
      );
    },
  },
  {
    name: 'records.search',
    title: 'Search records',
    description:
      'Records of a data type, by search text, member or external id (GET /w/{wid}/data-types/{dataTypeId}/records).',
    scope: 'records:read',
    selfAccess: true,
    readOnly: true,
    params: ['dataTypeId'],
    query: [...PAGE_KEYS, 'memberId', 'externalId'],
    properties: {
      dataTypeId: id('the data type'),
      ...PAGE,
      memberId: id('only records of this member'),
      externalId: { type: 'string', description: 'only the record with this external id' },
    },
    required: ['dataTypeId'],
    output: LIST,
    async run({ workspaceId, principal, queries, param, query }) {
      const q = await query(ListRecordsQueryDto);
      return queries.execute(
        new ListRecordsQuery(
          workspaceId,
          recordPathId(param('dataTypeId'), 'Data type'),
          toPageRequest(q),
          { memberId: q.memberId, externalId: q.externalId, fields: {}, sort: q.sort },
          recordCallerOf(principal),
        ),
      );
    },
  },
  {
    name: 'records.get',
    title: 'Get a record',
    description: 'One record (GET /w/{wid}/data-types/{dataTypeId}/records/{recordId}).',
    scope: 'records:read',
    selfAccess: true,
    readOnly: true,
    params: ['dataTypeId', 'recordId'],
    properties: { dataTypeId: id('the data type'), recordId: id('the record') },
    required: ['dataTypeId', 'recordId'],
    output: OBJECT,
    run({ workspaceId, principal, queries, param }) {
      return queries.execute(
        new GetRecordQuery(
          workspaceId,
          recordPathId(param('dataTypeId'), 'Data type'),
          recordPathId(param('recordId'), 'Record'),
          recordCallerOf(principal),
        ),
      );
    },
  },
  {
    name: 'records.create',
    title: 'Create a record',
    description: 'A new record of a data type (POST /w/{wid}/data-types/{dataTypeId}/records).',
    scope: 'records:write',
    selfAccess: true,
    readOnly: false,
    params: ['dataTypeId'],
    body: ['fieldValues', 'memberId', 'externalId'],
    properties: {
      dataTypeId: id('the data type'),
      fieldValues: FIELD_VALUES,
      memberId: id('the member the record belongs to'),
      externalId: { type: 'string', description: "the caller's own id for the record" },
    },
    required: ['dataTypeId', 'fieldValues'],
    output: OBJECT,
    async run({ workspaceId, principal, commands, queries, param, body }) {
      const input = await body(CreateRecordDto);
      const dataTypeId = recordPathId(param('dataTypeId'), 'Data type');
      const caller = recordCallerOf(principal);
      const id = await commands.execute<CreateRecordCommand, number>(
        new CreateRecordCommand(workspaceId, dataTypeId, input, caller),
      );
      return queries.execute(new GetRecordQuery(workspaceId, dataTypeId, id, caller, true));
    },
  },
  {
    name: 'records.update',
    title: 'Update a record',
    description: 'Change field values of a record (PUT /w/{wid}/data-types/{dataTypeId}/records/{recordId}).',
    scope: 'records:write',
    selfAccess: true,
    readOnly: false,
    params: ['dataTypeId', 'recordId'],
    body: ['fieldValues'],
    properties: { dataTypeId: id('the data type'), recordId: id('the record'), fieldValues: FIELD_VALUES },
    required: ['dataTypeId', 'recordId', 'fieldValues'],
    output: OBJECT,
    async run({ workspaceId, principal, commands, queries, param, body }) {
      const input = await body(UpdateRecordDto);
      const dataTypeId = recordPathId(param('dataTypeId'), 'Data type');
      const recordId = recordPathId(param('recordId'), 'Record');
      const caller = recordCallerOf(principal);
      await commands.execute(
        new UpdateRecordCommand(workspaceId, dataTypeId, recordId, input.fieldValues, caller, undefined),
      );
      return queries.execute(new GetRecordQuery(workspaceId, dataTypeId, recordId, caller, true));
    },
  },
  {
    name: 'records.upsert',
    title: 'Create or update a record by external id',
    description:
      'The record with this external id, created or updated (POST /w/{wid}/data-types/{dataTypeId}/upsert/{externalId}).',
    scope: 'records:write',
    selfAccess: true,
    readOnly: false,
    params: ['dataTypeId', 'externalId'],
    body: ['fieldValues', 'memberId'],
    properties: {
      dataTypeId: id('the data type'),
      externalId: { type: 'string', minLength: 1, description: "the caller's own id for the record" },
      fieldValues: FIELD_VALUES,
      memberId: id('the member the record belongs to'),
    },
    required: ['dataTypeId', 'externalId', 'fieldValues'],
    output: OBJECT,
    async run({ workspaceId, principal, commands, queries, param, body }) {
      const input = await body(UpsertRecordDto);
      const dataTypeId = recordPathId(param('dataTypeId'), 'Data type');
      const caller = recordCallerOf(principal);
      const outcome = await commands.execute<UpsertRecordCommand, UpsertOutcome>(
        new UpsertRecordCommand(workspaceId, dataTypeId, param('externalId'), input, caller),
      );
      const record = await queries.execute<GetRecordQuery, RecordResponse>(
        new GetRecordQuery(workspaceId, dataTypeId, outcome.recordId, caller, true),
      );
      return { ...record, wasCreated: outcome.wasCreated };
    },
  },
  {
    name: 'chats.list',
    title: 'List chats',
    description: 'The chats of the workspace the caller may read (GET /w/{wid}/chats).',
    scope: 'chats:read',
    selfAccess: true,
    readOnly: true,
    params: [],
    query: [...PAGE_KEYS, 'memberId'],
    properties: { ...PAGE, memberId: id('only chats of this member') },
    required: [],
    output: LIST,
    async run({ workspaceId, principal, queries, query }) {
      const q = await query(ChatListQueryDto);
      const { channel, memberId, workflowId, paused, needsResponse } = q;
      return queries.execute(
        new ListChatsQuery(
          workspaceId,
          { channel, memberId, workflowId, paused, needsResponse },
          chatCallerOf(principal),
          toPageRequest(q),
        ),
      );
    },
  },
  {
    name: 'chats.messages',
    title: 'Read chat messages',
    description: 'The messages of a chat (GET /w/{wid}/chats/{chatId}/messages).',
    scope: 'chats:read',
    selfAccess: true,
    readOnly: true,
    params: ['chatId'],
    query: ['page', 'pageSize'],
    properties: { chatId: id('the chat'), page: PAGE.page, pageSize: PAGE.pageSize },
    required: ['chatId'],
    output: LIST,
    async run({ workspaceId, principal, queries, param, query }) {
      const q = await query(PageQueryDto);
      return queries.execute(
        new ListMessagesQuery(
          workspaceId,
          chatPathId(param('chatId'), 'Chat'),
          chatCallerOf(principal),
          toPageRequest(q),
        ),
      );
    },
  },
  {
    name: 'chats.send_assistant_message',
    title: 'Send an assistant message',
    description:
      "A message in the chat from the chat's assistant (POST /w/{wid}/chats/{chatId}/send-assistant-message).",
    scope: 'chats:write',
    selfAccess: true,
    readOnly: false,
    params: ['chatId'],
    body: ['message'],
    properties: {
      chatId: id('the chat'),
      // The route's own limit (the chat decider's rule), advertised so a client knows it before calling.
      message: { type: 'string', minLength: 1, maxLength: MESSAGE_MAX },
    },
    required: ['chatId', 'message'],
    output: OBJECT,
    async run({ workspaceId, principal, commands, queries, param, body }) {
      const input = await body(SendAssistantMessageDto);
      const chatId = chatPathId(param('chatId'), 'Chat');
      const caller = chatCallerOf(principal);
      const messageId = await commands.execute<SendAssistantMessageCommand, number>(
        new SendAssistantMessageCommand(workspaceId, chatId, input.message, caller),
      );
      return queries.execute(new GetMessageQuery(workspaceId, chatId, messageId, caller));
    },
  },
  {
    name: 'tasks.list',
    title: 'List tasks',
    description: 'The tasks of the workspace (GET /w/{wid}/tasks).',
    scope: 'assignments:read',
    selfAccess: false,
    readOnly: true,
    params: [],
    query: [...PAGE_KEYS, 'status', 'assignee', 'priority'],
    properties: {
      ...PAGE,
      status: { type: 'string' },
      assignee: id('only tasks assigned to this member'),
      priority: { type: 'string' },
    },
    required: [],
    output: LIST,
    async run({ workspaceId, principal, queries, query }) {
      const q = await query(ListTasksQueryDto);
      const { status, assignee, workflowId, priority } = q;
      return queries.execute(
        new ListTasksQuery(
          workspaceId,
          { status, assignee, workflowId, priority },
          toPageRequest(q),
          workCallerOf(principal),
        ),
      );
    },
  },
  {
    name: 'tasks.create',
    title: 'Create a task',
    description: 'A new task (POST /w/{wid}/tasks; the body as that route takes it).',
    scope: 'assignments:write',
    selfAccess: false,
    readOnly: false,
    params: [],
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
    async run({ workspaceId, principal, commands, queries, body }) {
      const input = await body(CreateTaskDto);
      const caller = workCallerOf(principal);
      const id = await commands.execute<CreateTaskCommand, number>(
        new CreateTaskCommand(workspaceId, input, caller),
      );
      return queries.execute(new GetTaskQuery(workspaceId, id, caller));
    },
  },
  {
    name: 'tasks.update',
    title: 'Update a task',
    description: 'Change a task (PUT /w/{wid}/tasks/{taskId}).',
    scope: 'assignments:write',
    selfAccess: false,
    readOnly: false,
    params: ['taskId'],
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
    async run({ workspaceId, principal, commands, queries, param, body }) {
      const input = await body(UpdateTaskDto);
      const id = workPathId(param('taskId'), 'Task');
      const caller = workCallerOf(principal);
      // As the route: whether the caller may see the task at all comes first (a hidden one is a 404).
      await queries.execute(new GetTaskQuery(workspaceId, id, caller));
      await commands.execute(new UpdateTaskCommand(workspaceId, id, input, caller, undefined));
      return queries.execute(new GetTaskQuery(workspaceId, id, caller));
    },
  },
  {
    name: 'calendar_events.list',
    title: 'List calendar events in a window',
    description: 'Calendar events between startTime and endTime (GET /w/{wid}/calendar-events).',
    scope: 'calendars:read',
    selfAccess: true,
    readOnly: true,
    params: [],
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
    async run({ workspaceId, principal, queries, query }) {
      const q = await query(ListCalendarEventsQueryDto);
      return queries.execute(
        new ListCalendarEventsQuery(
          workspaceId,
          { calendarId: q.calendarId, attendeeMemberId: q.attendeeMemberId },
          calendarCallerOf(principal),
          toPageRequest(q),
        ),
      );
    },
  },
  {
    name: 'calendar_events.create',
    title: 'Create a calendar event',
    description: 'A new calendar event (POST /w/{wid}/calendar-events).',
    scope: 'calendars:write',
    selfAccess: true,
    readOnly: false,
    params: [],
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
    async run({ workspaceId, principal, commands, queries, body }) {
      const input = await body(CreateCalendarEventDto);
      const caller = calendarCallerOf(principal);
      const eventId = await commands.execute<CreateCalendarEventCommand, number>(
        new CreateCalendarEventCommand(workspaceId, { ...input }, caller),
      );
      return queries.execute(new GetCalendarEventQuery(workspaceId, eventId, caller));
    },
  },
];

const WORKSPACE_ARG: JsonSchema = {
  type: 'string',
  format: 'uuid',
  description:
    'the workspace to act in; an OAuth token is bound to the one chosen at consent (the default), an API key needs it',
};

/** The first path argument a call lacks (a non-empty string or a number), or undefined. */
export function missingParam(tool: McpTool, args: Record<string, unknown>): string | undefined {
  return tool.params.find((p) => {
    const v = args[p];
    return (typeof v !== 'string' || v === '') && typeof v !== 'number';
  });
}

/** The JSON Schema of a tool's arguments as tools/list shows it. */
export function inputSchemaOf(tool: McpTool, workspaceBound: boolean): JsonSchema {
  return {
    type: 'object',
    properties: { workspaceId: WORKSPACE_ARG, ...tool.properties },
    required: workspaceBound ? [...tool.required] : ['workspaceId', ...tool.required],
    additionalProperties: false,
  };
}
