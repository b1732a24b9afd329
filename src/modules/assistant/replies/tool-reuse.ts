import type { AssistantToolCalled } from '../domain/assistant.events';

/** JSON with object keys sorted at every depth: equal values give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The arguments text the model sent, as the tool box reads it: a JSON object, else undefined. */
function parsedObject(raw: string): Record<string, unknown> | undefined {
  if (raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const keyOf = (name: string, args: unknown) => `${name}\u0000${canonicalJson(args)}`;

/** Outcomes of a tool that ran and answered: running it again could repeat what it did. */
const RAN: ReadonlySet<AssistantToolCalled['data']['outcome']> = new Set(['ok', 'error']);

/**
 * The tool calls an earlier attempt of one reply job (same chat, same `replyTo`) already
 * ran, from the chat's assistant stream: a retry takes a recorded answer for a call of the
 * same tool with the same arguments (canonical JSON) instead of running the tool again,
 * so a write tool (a record, a task, an MCP server's action) acts once per reply. Each
 * recorded call answers at most one call of the attempt (a model calling one tool twice
 * with the same arguments ran it twice, and its retry reuses both). Calls that were
 * refused, had invalid arguments or failed ran nothing to repeat: they run again.
 */
export class EarlierToolCalls {
  private readonly byKey = new Map<string, AssistantToolCalled['data'][]>();

  constructor(events: readonly { type: string; data: unknown }[], replyTo: number) {
    for (const e of events) {
      if (e.type !== 'AssistantToolCalled') continue;
      const d = e.data as AssistantToolCalled['data'];
      if (d.replyTo !== replyTo || d.reused || !RAN.has(d.outcome)) continue;
      const key = keyOf(d.name, d.arguments);
      const list = this.byKey.get(key);
      if (list) list.push(d);
      else this.byKey.set(key, [d]);
    }
  }

  get size(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }

  /** The recorded call answering this one (taken: it answers no other), if any. */
  take(name: string, rawArguments: string): AssistantToolCalled['data'] | undefined {
    if (!this.byKey.size) return undefined;
    const args = parsedObject(rawArguments);
    if (args === undefined) return undefined;
    return this.byKey.get(keyOf(name, args))?.shift();
  }
}
