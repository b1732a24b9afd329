import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Principal } from './principal';
import type { AuthenticatedRequest } from './auth.guard';

/** The authenticated principal the guard attached. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const p = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!p) throw new Error('CurrentPrincipal used on a public route');
  return p;
});
