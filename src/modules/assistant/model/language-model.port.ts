/**
 * The language model behind `ai` chats, custom tools and summaries: a port with two
 * adapters chosen by ASSISTANT_PROVIDER — `openai` (any OpenAI-compatible chat-completions
 * server, through the official `openai` package) and `none` (no model: `ai` chats wait for
 * a human and summaries are plain digests). Inject it with `@Inject(LANGUAGE_MODEL)` after
 * importing LanguageModelModule from the assistant feature's index.ts.
 */
export const LANGUAGE_MODEL = Symbol('LANGUAGE_MODEL');

export interface LanguageModel {
  /** `none` or `openai`, for logs and for callers that fall back when no model exists. */
  readonly provider: 'none' | 'openai';
  /** False for `none`: `complete` always fails with ModelUnavailableError. */
  readonly available: boolean;
  /** The model used when the caller names none (ASSISTANT_MODEL). */
  readonly defaultModel: string;
  /**
   * One chat completion. Resolves with the model's text and/or tool calls; rejects with a
   * ModelError (retryable for 429, 5xx, timeouts and connection failures) and never with a
   * half answer.
   */
  complete(request: CompletionRequest): Promise<Completion>;
}

export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; name?: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ModelToolCall {
  /** The model's id for this call; the tool's answer refers to it. */
  id: string;
  /** The tool's name as offered (OpenAI allows [a-zA-Z0-9_-]{1,64}). */
  name: string;
  /** The arguments exactly as the model wrote them: JSON text, possibly malformed. */
  arguments: string;
}

export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export interface CompletionRequest {
  /** Defaults to the adapter's defaultModel. */
  model?: string;
  messages: ModelMessage[];
  tools?: ModelTool[];
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface Completion {
  content: string | null;
  toolCalls: ModelToolCall[];
  /** `stop`, `tool_calls`, `length`, `content_filter`, or what the server said. */
  finishReason: string;
  model: string;
  usage?: { promptTokens: number; completionTokens: number };
}

/** A model call that failed; `retryable` says whether trying again later may succeed. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** Raised by the `none` adapter: there is no model to ask. */
export class ModelUnavailableError extends ModelError {
  constructor() {
    super('no language model is configured (ASSISTANT_PROVIDER=none)', false);
    this.name = 'ModelUnavailableError';
  }
}
