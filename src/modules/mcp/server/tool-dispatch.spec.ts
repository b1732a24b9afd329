import type { ModuleRef } from '@nestjs/core';
import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { INTERNAL_ERROR_DETAIL } from '../../../core/http/http-exception.filter';
import { JsonLogger } from '../../../core/logging/json-logger';
import { TEST_SERVER_URL } from '../../../../test/support/database';
import { ToolDispatcher } from './tool-dispatch';
import type { McpTool } from './tools';

/** A record field value, as PHI as they come: it must reach no log line. */
const PHI = 'Ada-Lovelace-MRN-7731';
const ws = '0b8f7c1e-3f4a-4c55-9e2a-7d1c2b3a4f5e';

describe('ToolDispatcher: a tool that fails with a 5xx', () => {
  let db: DataSource;
  beforeAll(async () => {
    db = await new DataSource({ type: 'postgres', url: TEST_SERVER_URL }).initialize();
  });
  afterAll(() => db.destroy());

  it("logs the error's class, SQLSTATE and stack frames, never its message (PostgreSQL quotes the argument) nor the arguments", async () => {
    let thrown: Error | undefined;
    const tool = {
      name: 'records.lookup',
      scope: 'records:read',
      selfAccess: false,
      params: ['value'],
      run: async ({ param }: { param(name: string): string }) => {
        try {
          // A real statement PostgreSQL refuses, quoting the value it was given.
          return await db.query('SELECT $1::int AS n', [param('value')]);
        } catch (error) {
          thrown = error as Error;
          throw error;
        }
      },
    } as unknown as McpTool;
    const dispatcher = new ToolDispatcher(
      {} as CommandBus,
      {} as QueryBus,
      {} as ModuleRef,
      new JsonLogger('info'),
    );
    const dispatch = dispatcher.forRequest({
      credential: { kind: 'api_key', credentialId: 'k1', accountUuid: 'a1', scopes: ['records:read'] },
      requestId: 'req-phi',
      boundWorkspaceId: ws,
      membership: {
        workspaceId: ws,
        memberId: 1,
        roleId: null,
        roleScopes: ['records:read'],
        kind: 'person',
      },
    });

    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    let answer;
    try {
      answer = await dispatch(tool, ws, { value: PHI });
    } finally {
      process.stdout.write = write;
    }

    // The failure was the one that leaks: PostgreSQL's message carries the value.
    expect(thrown?.message).toContain(PHI);
    expect(answer).toEqual({ status: 500, body: { detail: INTERNAL_ERROR_DETAIL } });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'error',
      msg: 'MCP tool call failed',
      requestId: 'req-phi',
      tool: 'records.lookup',
      err: { name: 'QueryFailedError', code: '22P02', stack: expect.stringMatching(/^\s+at /) },
    });
    expect(lines.join('')).not.toContain(PHI);
    expect(lines.join('')).not.toContain('invalid input syntax');
  });
});
