import { ValidationError } from '../../../core/http/domain-errors';
import type { MemberKind } from './identity.events';

export const MAX_AGENT_MODEL = 200;
export const MAX_AGENT_INSTRUCTIONS = 8_000;

/** A model id as OpenAI-compatible servers name them (`gpt-4o-mini`, `org/Llama-3.1-8B`, `qwen2.5:7b`). */
const MODEL = /^[\x21-\x7e]+$/;
/** Control characters other than tab, line feed and carriage return (PostgreSQL text refuses NUL). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** The model of an agent member's chats' replies: printable ASCII without spaces, at most 200. */
export function normalizeAgentModel(raw: string, field: string): string {
  const model = raw.trim();
  if (!model || model.length > MAX_AGENT_MODEL || !MODEL.test(model))
    throw new ValidationError(
      `${field}: must be a model name of 1 to ${MAX_AGENT_MODEL} printable characters without spaces`,
    );
  return model;
}

/** The instructions put into an agent member's system prompt: text of at most 8,000 characters. */
export function normalizeAgentInstructions(raw: string, field: string): string {
  const text = raw.trim();
  if (!text) throw new ValidationError(`${field}: must not be empty (null removes the instructions)`);
  if (text.length > MAX_AGENT_INSTRUCTIONS)
    throw new ValidationError(`${field}: must be at most ${MAX_AGENT_INSTRUCTIONS} characters`);
  if (CONTROL.test(text))
    throw new ValidationError(`${field}: must not hold control characters (tab and line breaks are fine)`);
  return text;
}

export const AGENT_SETTINGS = ['agentModel', 'agentInstructions'] as const;

/**
 * Only an agent member has assistant settings: a value given for a person is a 400 naming
 * the field (null, which clears, is fine for anyone).
 */
export function checkAgentSettings(
  kind: MemberKind,
  settings: { agentModel?: string | null; agentInstructions?: string | null },
  prefix = '',
): void {
  if (kind === 'agent') return;
  for (const field of AGENT_SETTINGS)
    if (settings[field] !== undefined && settings[field] !== null)
      throw new ValidationError(
        `${prefix}${field}: only for agent members (kind agent); this member is a person`,
      );
}
