/** One event of a Server-Sent Events stream: its id and type when given, its data (JSON parsed when it is JSON). */
export interface SseEvent {
  id?: string;
  event?: string;
  data: unknown;
}

/** An open SSE stream: what has arrived so far (raw and as events), and whether the server ended it. */
export interface SseStream {
  status: number;
  contentType: string | null;
  text: string;
  events: SseEvent[];
  ended: boolean;
  close(): void;
}

/**
 * Opens a Server-Sent Events stream with a bearer token (and any other headers, such as
 * `last-event-id`) and collects it as it arrives, until the server ends it or `close()`.
 */
export async function openSse(
  url: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: controller.signal,
  });
  const stream: SseStream = {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text: '',
    events: [],
    ended: false,
    close: () => controller.abort(),
  };
  if (!res.body) return stream;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        stream.text += chunk;
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = eventOf(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event) stream.events.push(event);
        }
      }
      stream.ended = true;
    } catch {
      // aborted by the test
    }
  })();
  return stream;
}

function eventOf(block: string): SseEvent | undefined {
  const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1];
  const data = field('data');
  if (data === undefined) return undefined;
  let parsed: unknown = data;
  try {
    parsed = JSON.parse(data);
  } catch {
    // not JSON: kept as text
  }
  return { id: field('id'), event: field('event'), data: parsed };
}
