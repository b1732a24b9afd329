import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CREATED_LOCATION } from '../../src/core/http/location';
import { startTestApp, TestApp, TestResponse } from '../support/app';

describe('201 responses carry Location (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** The Location answers, to the same credential, what the 201 answered. */
  async function expectLocation(res: TestResponse, path: string, token: string): Promise<void> {
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v2${path}`);
    const again = await t.request('GET', path, { token });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(res.body.id ?? res.body.member.id);
  }

  it('every route that can answer 201 declares its Location', () => {
    const scanner = new MetadataScanner();
    const missing: string[] = [];
    let created = 0;
    for (const wrapper of t.app.get(DiscoveryService).getControllers()) {
      const controller = wrapper.metatype as Type | null;
      if (!controller) continue;
      for (const name of scanner.getAllMethodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, object>)[name];
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
        const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
        // Nest answers POST with 201 unless the route says otherwise.
        if ((code ?? (method === RequestMethod.POST ? 201 : 200)) !== 201) continue;
        created++;
        // RFC 7591 registration answers 201 with the client's information; the RFC 7592
        // management endpoint is not offered, so there is no resource to point at.
        if (`${controller.name}.${name}` === 'TokenController.register') continue;
        if (!Reflect.getMetadata(CREATED_LOCATION, handler)) missing.push(`${controller.name}.${name}`);
      }
    }
    expect(created).toBeGreaterThanOrEqual(4);
    expect(missing).toEqual([]);
  });

  it('POST /me/api-keys, /member-roles, /invitations and /create-signup say where the new resource is', async () => {
    const a = await t.bootstrap();
    const w = `/w/${a.workspaceId}`;
    const key = await t.request('POST', '/me/api-keys', { token: a.apiKey, body: { name: 'k', scopes: [] } });
    await expectLocation(key, `/me/api-keys/${key.body.id}`, a.apiKey);

    const role = await t.request('POST', `${w}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Located', permissions: ['members:read'] },
    });
    await expectLocation(role, `${w}/member-roles/${role.body.id}`, a.apiKey);

    const invitation = await t.request('POST', `${w}/invitations`, {
      token: a.apiKey,
      body: { email: 'located@example.com' },
    });
    await expectLocation(invitation, `${w}/invitations/${invitation.body.id}`, a.apiKey);

    const signup = await t.request('POST', `${w}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'signed-up@example.com' } },
    });
    await expectLocation(signup, `${w}/members/${signup.body.member.id}`, a.apiKey);
    // The same signup again finds the member: 200, nothing created, no Location.
    const existing = await t.request('POST', `${w}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'signed-up@example.com' } },
    });
    expect(existing.status).toBe(200);
    expect(existing.headers.get('location')).toBeNull();
  });
});
