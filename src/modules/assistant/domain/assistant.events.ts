/**
 * What the assistant did in a chat, on the stream `assistant-chat-<chatId>` (beside the
 * chat's own `chat-<id>`, which messaging owns): every tool call with its outcome, and a
 * reply that could not be given. Arguments and results may hold record values: they are
 * PHI, kept in events (auditors read them through GET /w/{wid}/events) and never logged.
 */
export type ToolSource = 'toolkit' | 'mcp-server' | 'service';

/**
 * `ok`: the tool answered; `error`: it answered with an error of its own (fed back to the
 * model); `invalid_arguments`: the model's arguments were not JSON or failed the tool's
 * schema (fed back); `refused`: not offered to this chat's agent, or (a service tool)
 * outside the agent member's scopes or workspace (fed back); `failed`: the tool
 * could not be run (its server unreachable, its model failing): the reply fails.
 */
export type ToolOutcome = 'ok' | 'error' | 'invalid_arguments' | 'refused' | 'failed';

export interface AssistantToolCalled {
  type: 'AssistantToolCalled';
  data: {
    chatId: number;
    workspaceId: string;
    /** The user message the reply answers. */
    replyTo: number;
    attempt: number;
    round: number;
    /** The model's id of the call. */
    callId: string;
    /** The name the model was offered (OpenAI's [a-zA-Z0-9_-]{1,64}). */
    name: string;
    source: ToolSource | null;
    /**
     * What it names: the custom tool's id, the MCP server's id and the tool's own name, or
     * for the service's own tools the endpoint's tool name and the agent member acting.
     */
    target: { toolId?: number; serverId?: number; memberId?: number; tool: string } | null;
    /** Parsed arguments, or the raw text when it was not a JSON object. */
    arguments: unknown;
    outcome: ToolOutcome;
    /** What the model was given back (bounded). */
    result: string;
    durationMs: number;
    calledAt: string;
    /**
     * A retry of the reply found this call (same tool, same arguments) already run by an
     * earlier attempt, and gave the model that call's recorded result instead of running
     * the tool again; `reusedFrom` names it. Absent on calls that ran.
     */
    reused?: true;
    reusedFrom?: { attempt: number; callId: string };
  };
}

/** A reply the assistant could not give: nothing was sent and the chat still needs a response. */
export interface AssistantReplyFailed {
  type: 'AssistantReplyFailed';
  data: {
    chatId: number;
    workspaceId: string;
    replyTo: number;
    /** `model_error`, `tool_failed`, `tool_rounds_exhausted`, `empty_answer`, `answer_too_long`, `send_refused`. */
    reason: string;
    detail: string;
    attempts: number;
    failedAt: string;
  };
}

/** The reply went out as the chat's message `messageId` (MessageSent in `chat-<id>`). */
export interface AssistantReplied {
  type: 'AssistantReplied';
  data: {
    chatId: number;
    workspaceId: string;
    replyTo: number;
    messageId: number;
    model: string;
    rounds: number;
    toolCalls: number;
    repliedAt: string;
  };
}

export type AssistantEvent = AssistantToolCalled | AssistantReplyFailed | AssistantReplied;

export const assistantChatStream = (chatId: number): string => `assistant-chat-${chatId}`;
