import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import {
  Completion,
  CompletionRequest,
  LanguageModel,
  ModelError,
  ModelMessage,
} from './language-model.port';
import { httpFetch } from './http-fetch';

export interface OpenAiModelOptions {
  baseUrl: string;
  apiKey: string | undefined;
  defaultModel: string;
  timeoutMs: number;
}

/**
 * ASSISTANT_PROVIDER=openai: chat completions through the official `openai` package, at
 * OPENAI_BASE_URL (any OpenAI-compatible server), its requests sent over Node's http
 * (http-fetch.ts). The package's own retries are off: the caller's BullMQ job retries with
 * backoff, so one failure is one attempt in the logs.
 */
export class OpenAiLanguageModel implements LanguageModel {
  readonly provider = 'openai' as const;
  readonly available = true;
  readonly defaultModel: string;
  private readonly client: OpenAI;

  constructor(options: OpenAiModelOptions) {
    this.defaultModel = options.defaultModel;
    this.client = new OpenAI({
      baseURL: options.baseUrl,
      // Local servers (vLLM, Ollama) take any key; the package insists on one.
      apiKey: options.apiKey ?? 'not-set',
      timeout: options.timeoutMs,
      maxRetries: 0,
      // Node's http instead of global fetch: the same exchange for a fraction of the CPU (http-fetch.ts).
      fetch: httpFetch(),
    });
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    const model = request.model || this.defaultModel;
    let response: OpenAI.Chat.Completions.ChatCompletion;
    try {
      response = await this.client.chat.completions.create(
        {
          model,
          messages: request.messages.map(toOpenAiMessage),
          ...(request.tools?.length ? { tools: request.tools.map(toOpenAiTool) } : {}),
          ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        },
        { signal: request.signal },
      );
    } catch (error) {
      throw toModelError(error);
    }
    const choice = response.choices?.[0];
    if (!choice?.message) throw new ModelError('the model answered without a choice', true);
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function'
        ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }]
        : [],
    );
    return {
      content: choice.message.content ?? null,
      toolCalls,
      finishReason: choice.finish_reason ?? 'stop',
      model: response.model || model,
      usage: response.usage
        ? {
            promptTokens: response.usage.prompt_tokens,
            completionTokens: response.usage.completion_tokens,
          }
        : undefined,
    };
  }
}

function toOpenAiMessage(message: ModelMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content, ...(message.name ? { name: message.name } : {}) };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAiTool(tool: {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** 429, 5xx, timeouts and connection failures may pass; other 4xx will not. */
function toModelError(error: unknown): ModelError {
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new ModelError('the model did not answer in time', true);
  if (error instanceof OpenAI.APIConnectionError)
    return new ModelError('the model server could not be reached', true);
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
    return new ModelError(`the model server answered ${status ?? 'an error'}`, retryable, status);
  }
  if (error instanceof Error && error.name === 'AbortError')
    return new ModelError('the model call was cancelled', false);
  return new ModelError('the model call failed', true);
}
