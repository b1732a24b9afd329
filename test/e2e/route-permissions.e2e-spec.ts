import { Controller, Get, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  ACCOUNT_SCOPE,
  PUBLIC_ROUTE,
  REQUIRED_SCOPE,
  SELF_POLICY,
} from '../../src/core/auth/auth.decorators';
import { isAccountScope, isValidScope } from '../../src/core/auth/scopes';
import { startTestApp, TestApp } from '../support/app';

interface Route {
  route: string;
  scope?: string;
  /** An account scope the credential itself must hold (@RequireAccountScope). */
  accountScope?: string;
  self: boolean;
  isPublic: boolean;
}

const join = (...parts: (string | undefined)[]): string =>
  '/' +
  parts
    .flatMap((p) => (p ?? '').split('/'))
    .filter(Boolean)
    .join('/');

/** Every route a controller class declares, with what it says about authentication. */
function routesOf(controller: Type, reflector = new Reflector(), scanner = new MetadataScanner()): Route[] {
  const base = Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined;
  const out: Route[] = [];
  for (const name of scanner.getAllMethodNames(controller.prototype)) {
    const handler = (controller.prototype as Record<string, unknown>)[name] as (
      ...args: unknown[]
    ) => unknown;
    const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    if (path === undefined) continue; // not a route handler
    const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
    const targets = [handler, controller];
    const route = `${method} ${join(...[base].flat(), ...[path].flat())}`;
    out.push({
      route,
      scope: reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets),
      accountScope: reflector.getAllAndOverride<string | undefined>(ACCOUNT_SCOPE, targets),
      self: !!reflector.getAllAndOverride<boolean>(SELF_POLICY, targets),
      isPublic: !!reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets),
    });
  }
  return out;
}

const undeclared = (routes: Route[]): string[] =>
  routes.filter((r) => !r.scope && !r.self && !r.isPublic).map((r) => r.route);

@Controller('forgotten')
class ForgottenController {
  @Get()
  list(): string[] {
    return [];
  }
}

describe('every route declares its access (e2e)', () => {
  let t: TestApp;
  let routes: Route[];
  beforeAll(async () => {
    t = await startTestApp();
    const controllers = t.app
      .get(DiscoveryService)
      .getControllers()
      .map((w) => w.metatype as Type | null)
      .filter((c): c is Type => !!c);
    routes = controllers.flatMap((c) => routesOf(c));
  });
  afterAll(() => t.close());

  it('finds the routes of the real application', () => {
    const names = routes.map((r) => r.route);
    for (const known of [
      'GET /health',
      'GET /resources/registry',
      'GET /w',
      'PUT /w/:wid',
      'GET /w/:wid/member-roles',
      'POST /w/:wid/member-roles/:roleId/merge',
      'DELETE /w/:wid/member-roles/:roleId',
      'POST /me/api-keys',
      'DELETE /me/api-keys/:keyId',
    ]) {
      expect(names).toContain(known);
    }
  });

  it('fails a route that declares neither a scope, @SelfAccess nor @Public', () => {
    expect(undeclared(routesOf(ForgottenController))).toEqual(['GET /forgotten']);
  });

  it('has no route without a scope, @SelfAccess or @Public', () => {
    expect(undeclared(routes)).toEqual([]);
  });

  it('declares only scopes that exist, and no public route inside a workspace', () => {
    expect(
      routes.filter((r) => r.scope && !isValidScope(r.scope)).map((r) => `${r.route} (${r.scope})`),
    ).toEqual([]);
    expect(routes.filter((r) => r.isPublic && r.route.includes(':wid')).map((r) => r.route)).toEqual([]);
  });

  it('account-wide operations (API keys, OAuth apps, the password, listing, accepting and declining invitations) need account:admin, and only they', () => {
    expect(
      routes
        .filter((r) => r.accountScope)
        .map((r) => `${r.route} ${r.accountScope}`)
        .sort(),
    ).toEqual([
      'DELETE /me/api-keys/:keyId account:admin',
      'DELETE /me/apps/:appId account:admin',
      'GET /me/api-keys account:admin',
      'GET /me/api-keys/:keyId account:admin',
      'GET /me/apps account:admin',
      'GET /me/apps/:appId account:admin',
      'GET /me/invitations account:admin',
      'POST /me/api-keys account:admin',
      'POST /me/apps account:admin',
      'POST /me/apps/:appId/rotate-secret account:admin',
      'POST /me/invitations/:invitationId/accept account:admin',
      'POST /me/invitations/:invitationId/decline account:admin',
      'PUT /me/apps/:appId account:admin',
      'PUT /me/password account:admin',
    ]);
    expect(routes.filter((r) => r.accountScope && !isAccountScope(r.accountScope))).toEqual([]);
  });

  it('covers every operation of the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const walked = new Set(routes.map((r) => r.route));
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map(
        (m) => `${m.toUpperCase()} ${path.replace(/^\/api\/v2/, '').replace(/\{(\w+)\}/g, ':$1') || '/'}`,
      ),
    );
    expect(operations.length).toBeGreaterThan(10);
    expect(operations.filter((op) => !walked.has(op))).toEqual([]);
  });
});
