import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { markRouteAuth } from '../http/route-auth';

export const PUBLIC_ROUTE = 'auth:public';
export const REQUIRED_SCOPE = 'auth:scope';
export const SELF_POLICY = 'auth:self';
export const OPERATOR_ROUTE = 'auth:operator';
export const ACCOUNT_SCOPE = 'auth:account-scope';

/** The route needs no credential (registry, health, OAuth endpoints). */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(PUBLIC_ROUTE, true), markRouteAuth('public'));

/**
 * The route needs this scope (`<namespace>:<level>`) in the workspace it names.
 * Every route declares either this or @Public(); a test walks the routes to check.
 */
export const RequireScope = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    markRouteAuth('credential'),
    ApiBearerAuth(),
    ApiSecurity('bearer'),
  );

/**
 * The route acts on the caller's own resources (e.g. GET /me): any authenticated
 * principal may call it; the handler restricts to self.
 */
export const SelfAccess = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(SELF_POLICY, true), markRouteAuth('credential'), ApiBearerAuth());

/**
 * An account-level route (no {wid}) that also needs an account scope (`account:admin`)
 * in the credential's own scopes: not intersected with any role, since no workspace is
 * involved and roles never hold account scopes. Implies @SelfAccess.
 */
export const RequireAccountScope = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(ACCOUNT_SCOPE, scope),
    SetMetadata(SELF_POLICY, true),
    markRouteAuth('credential'),
    ApiBearerAuth(),
  );
