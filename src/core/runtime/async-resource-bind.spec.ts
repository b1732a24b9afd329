import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { installLeanAsyncResourceBind } from './async-resource-bind';

describe('installLeanAsyncResourceBind', () => {
  const stock = AsyncResource.prototype.bind;
  afterAll(() => {
    AsyncResource.prototype.bind = stock;
  });

  it('replaces the bind that builds the deprecated accessor on every call (Node 20)', () => {
    const before = AsyncResource.bind(() => 1);
    expect(typeof Object.getOwnPropertyDescriptor(before, 'asyncResource')?.get).toBe('function');
    expect(installLeanAsyncResourceBind()).toBe(true);
    expect(AsyncResource.prototype.bind).not.toBe(stock);
    expect(
      Object.getOwnPropertyDescriptor(
        AsyncResource.bind(() => 1),
        'asyncResource',
      ),
    ).toBeUndefined();
    // Installed once: a second call finds nothing to replace.
    expect(installLeanAsyncResourceBind()).toBe(false);
  });

  it('runs the bound function in the async context of the bind, not of the call', async () => {
    const als = new AsyncLocalStorage<string>();
    const bound = als.run('at-bind', () => AsyncResource.bind(() => als.getStore()));
    expect(als.run('at-call', () => bound())).toBe('at-bind');
    const later = await als.run(
      'at-call',
      () => new Promise((resolve) => setImmediate(() => resolve(bound()))),
    );
    expect(later).toBe('at-bind');
    const instance = als.run('instance', () => new AsyncResource('x').bind(() => als.getStore()));
    expect(instance()).toBe('instance');
  });

  it("keeps arguments, return value, length, the caller's this and an explicit thisArg", () => {
    function f(this: unknown, a: number, b: number) {
      return { self: this, sum: a + b };
    }
    const bound = AsyncResource.bind(f);
    expect(bound.length).toBe(2);
    const owner = { m: bound };
    expect(owner.m(2, 3)).toEqual({ self: owner, sum: 5 });
    const fixed = { fixed: true };
    const resource = new AsyncResource('x') as unknown as { bind(fn: typeof f, thisArg: unknown): typeof f };
    const withThis = resource.bind(f, fixed);
    expect(withThis.length).toBe(2);
    expect(withThis.call(owner, 1, 1)).toEqual({ self: fixed, sum: 2 });
  });

  it('throws what Node throws for a non-function and lets an error of fn through', () => {
    expect(() => new AsyncResource('x').bind(42 as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }),
    );
    const failing = AsyncResource.bind(() => {
      throw new Error('boom');
    });
    expect(() => failing()).toThrow('boom');
  });
});
