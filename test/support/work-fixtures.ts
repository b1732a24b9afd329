import type { TestApp } from './app';
import { importMembers, signup } from './identity-fixtures';

let counter = 0;

/** An agent member (kind agent, built-in Agent role) created through the member import. */
export async function agentMember(t: TestApp, wid: string, apiKey: string): Promise<number> {
  const res = await importMembers(t, wid, apiKey, [{ name: `Agent ${++counter}`, kind: 'agent' }]);
  if (res.status !== 200 || res.body.results.length !== 1)
    throw new Error(`agent import: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.results[0].memberId as number;
}

/** A person signed up with a member token, moved to `roleId` when given. */
export async function person(
  t: TestApp,
  wid: string,
  apiKey: string,
  roleId?: number,
): Promise<{ memberId: number; token: string }> {
  const s = await signup(t, wid, apiKey, { email: `person${++counter}-${process.pid}@example.com` });
  if (roleId !== undefined) {
    const res = await t.request('PUT', `/w/${wid}/members/${s.member.id}`, {
      token: apiKey,
      body: { memberRoleId: roleId },
    });
    if (res.status !== 200) throw new Error(`role change: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { memberId: s.member.id, token: s.token };
}

export async function createWorkflow(
  t: TestApp,
  wid: string,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<{ id: number; uuid: string }> {
  const res = await t.request('POST', `/w/${wid}/workflows`, { token: apiKey, body });
  if (res.status !== 201) throw new Error(`workflow: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: number; uuid: string };
}
