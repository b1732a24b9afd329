import { AsyncResource } from 'node:async_hooks';

/**
 * Node 20's `AsyncResource#bind` (and the static `AsyncResource.bind`, which calls it)
 * defines a deprecated `asyncResource` accessor (DEP0172) on every function it returns,
 * built with `util.deprecate` twice; each wrapper's `Object.setPrototypeOf` makes a fresh
 * function a prototype. Fastify's body parser binds once per request with a body and Nest's
 * interceptor chain once per interceptor and request: 5.5% of the service's CPU samples on
 * `PUT` member (README, the http bench's round 16). This installs a `bind` that does the same
 * (the bound function runs `fn` in the resource's async scope with the caller's `this`, or
 * with `thisArg`, and keeps `fn.length`) without that deprecated property, which nothing
 * reads. Installed by the process entry points (main.ts, worker.ts) before anything binds;
 * a Node whose `bind` no longer defines the accessor is left as it is.
 */
export function installLeanAsyncResourceBind(): boolean {
  const probe = new AsyncResource('probe').bind(() => undefined);
  if (!Object.getOwnPropertyDescriptor(probe, 'asyncResource')?.get) return false;
  // @types/node leaves out bind's optional thisArg, which Node documents and this keeps.
  (AsyncResource.prototype as unknown as { bind: unknown }).bind = function bind(
    this: AsyncResource,
    fn: AnyFunction,
    thisArg?: unknown,
  ): AnyFunction {
    return leanBind(this, fn, thisArg);
  };
  return true;
}

type AnyFunction = (...args: unknown[]) => unknown;

function leanBind(resource: AsyncResource, fn: AnyFunction, thisArg: unknown): AnyFunction {
  if (typeof fn !== 'function') {
    throw Object.assign(new TypeError(`The "fn" argument must be of type function. Received ${typeof fn}`), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
  }
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(fn, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, fn, thisArg);
  Object.defineProperty(bound, 'length', {
    configurable: true,
    enumerable: false,
    value: fn.length,
    writable: false,
  });
  return bound;
}
