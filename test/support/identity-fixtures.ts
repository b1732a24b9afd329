import type { TestApp } from './app';

export interface SignedUp {
  token: string;
  account: { uuid: string; email: string | null; phone: string | null; name: string | null };
  member: { id: number; email: string | null; memberRoleId: number };
  wasCreated: boolean;
}

/** POST create-signup and expect success. */
export async function signup(
  t: TestApp,
  wid: string,
  apiKey: string,
  member: Record<string, unknown>,
): Promise<SignedUp> {
  const res = await t.request('POST', `/w/${wid}/create-signup`, { token: apiKey, body: { member } });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as SignedUp;
}

/** Built-in roles of a workspace by name (Manager, Platform Support, User, Agent, External). */
export async function builtInRoles(t: TestApp, wid: string, apiKey: string): Promise<Record<string, number>> {
  const res = await t.request('GET', `/w/${wid}/member-roles?pageSize=1000`, { token: apiKey });
  if (res.status !== 200) throw new Error(`roles: ${res.status} ${JSON.stringify(res.body)}`);
  return Object.fromEntries(
    (res.body.items as { id: number; name: string; isBuiltIn: boolean }[])
      .filter((r) => r.isBuiltIn)
      .map((r) => [r.name, r.id]),
  );
}

export async function customRole(
  t: TestApp,
  wid: string,
  apiKey: string,
  name: string,
  permissions: string[] = [],
): Promise<number> {
  const res = await t.request('POST', `/w/${wid}/member-roles`, {
    token: apiKey,
    body: { name, permissions },
  });
  if (res.status !== 201) throw new Error(`role: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as number;
}

/** An API key of the bootstrap account limited to `scopes` (intersected with its Manager role). */
export async function keyWithScopes(t: TestApp, apiKey: string, scopes: string[]): Promise<string> {
  const res = await t.request('POST', '/me/api-keys', {
    token: apiKey,
    body: { name: `limited ${scopes.join(' ')}`, scopes },
  });
  if (res.status !== 201) throw new Error(`api key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret as string;
}

export async function importMembers(
  t: TestApp,
  wid: string,
  apiKey: string,
  members: unknown[],
  upsert?: boolean,
) {
  return t.request('POST', `/w/${wid}/members/import`, {
    token: apiKey,
    body: upsert === undefined ? { members } : { members, upsert },
  });
}
