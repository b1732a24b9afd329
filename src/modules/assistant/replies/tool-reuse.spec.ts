import type { AssistantToolCalled } from '../domain/assistant.events';
import { canonicalJson, EarlierToolCalls } from './tool-reuse';

const called = (data: Partial<AssistantToolCalled['data']>) => ({
  type: 'AssistantToolCalled',
  data: {
    chatId: 1,
    workspaceId: 'w',
    replyTo: 10,
    attempt: 1,
    round: 1,
    callId: 'c1',
    name: 'mcp_x__write',
    source: 'mcp-server',
    target: { serverId: 1, tool: 'write' },
    arguments: { a: 1, b: { d: [1, { f: 2, e: 1 }], c: 'x' } },
    outcome: 'ok',
    result: 'written',
    durationMs: 1,
    calledAt: '2026-01-01T00:00:00.000Z',
    ...data,
  } as AssistantToolCalled['data'],
});

describe('tool reuse across attempts of a reply', () => {
  it('canonicalJson sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
    expect(canonicalJson([{ y: 1, x: 2 }])).toBe('[{"x":2,"y":1}]');
  });

  it('answers a call of the same tool with the same arguments (any key order) once per recorded call', () => {
    const earlier = new EarlierToolCalls(
      [called({ callId: 'c1' }), called({ callId: 'c2', arguments: { a: 2 } })],
      10,
    );
    const same = '{"b":{"c":"x","d":[1,{"e":1,"f":2}]},"a":1}';
    expect(earlier.take('mcp_x__write', same)?.callId).toBe('c1');
    // Taken: a second identical call runs.
    expect(earlier.take('mcp_x__write', same)).toBeUndefined();
    expect(earlier.take('mcp_x__write', '{"a":3}')).toBeUndefined();
    expect(earlier.take('mcp_x__other', '{"a":2}')).toBeUndefined();
    expect(earlier.take('mcp_x__write', '{"a":2}')?.callId).toBe('c2');
  });

  it("ignores other jobs' calls, reuses, and calls that ran nothing (refused, invalid, failed)", () => {
    const earlier = new EarlierToolCalls(
      [
        called({ callId: 'other-job', replyTo: 9 }),
        called({ callId: 'reused', reused: true }),
        called({ callId: 'refused', outcome: 'refused' }),
        called({ callId: 'invalid', outcome: 'invalid_arguments' }),
        called({ callId: 'failed', outcome: 'failed' }),
        { type: 'AssistantReplyFailed', data: { replyTo: 10 } },
      ],
      10,
    );
    expect(earlier.size).toBe(0);
    const errorAnswer = new EarlierToolCalls([called({ callId: 'e', outcome: 'error', arguments: {} })], 10);
    // A tool's own error answer ran it: reused too. No arguments reads as {}.
    expect(errorAnswer.take('mcp_x__write', '')?.callId).toBe('e');
  });

  it('never matches arguments that are not a JSON object', () => {
    const earlier = new EarlierToolCalls([called({ arguments: '{"a": ' })], 10);
    expect(earlier.take('mcp_x__write', '{"a": ')).toBeUndefined();
    expect(earlier.take('mcp_x__write', '[1]')).toBeUndefined();
  });
});
