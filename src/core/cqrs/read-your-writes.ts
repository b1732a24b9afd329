import { applyDecorators, Injectable, OnModuleInit, SetMetadata } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { AsyncLocalStorage } from 'node:async_hooks';
import { markRouteConfig } from '../http/route-auth';
import { ConsistencyWaiter } from '../projections/consistency';

export const SKIP_READ_YOUR_WRITES = 'read-your-writes:skip';

/**
 * For a route whose caller never reads back (a provider's webhook: Twilio posts an inbound
 * text and reads nothing after our answer): its response does not wait for the projections
 * to pass what it appended. What the handler dispatches still waits as everywhere else, and
 * whatever acts on the write (a reactor, a job) follows the event store, not the answer.
 */
export const SkipReadYourWrites = (): MethodDecorator =>
  applyDecorators(SetMetadata(SKIP_READ_YOUR_WRITES, true), markRouteConfig(SKIP_READ_YOUR_WRITES, true));

/** Set while a command or query handler runs: what it dispatches is part of its own work. */
const insideHandler = new AsyncLocalStorage<true>();

/**
 * Read-your-writes, in one place. The request context records every append of the
 * request (core/cqrs/request-context.ts). A query dispatched through the QueryBus, or a
 * command through the CommandBus (commands read read models to decide), first waits
 * until the projections have passed what the request appended so far; the response
 * waits for the rest (core/cqrs/request-context.hooks.ts). So a PUT that answers with a GET of its
 * resource, or creates a role and then makes it the default, reads its own write without
 * any call of its own.
 *
 * Only dispatches from outside a handler wait: inside one, the handler owns its reads
 * (an import appending row after row must not wait for its own projections per row),
 * exactly as before this mechanism replaced the hand-placed waits.
 */
/**
 * Runs `fn` as a dispatch of its own rather than part of the handler that calls it: its
 * commands and queries wait for what the request appended, as a controller's do. For a
 * handler that runs a route's work whole (the MCP tools a chat's assistant calls through
 * a command): a create followed by its GET must read its own write there too.
 */
export function asOwnDispatch<T>(fn: () => T): T {
  return insideHandler.exit(fn);
}

@Injectable()
export class ReadYourWritesBuses implements OnModuleInit {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly waiter: ConsistencyWaiter,
  ) {}

  onModuleInit(): void {
    this.wrap(this.queries);
    this.wrap(this.commands);
  }

  private wrap(bus: CommandBus | QueryBus): void {
    const execute = bus.execute.bind(bus) as (message: object, ...rest: unknown[]) => Promise<unknown>;
    const settle = () => this.waiter.settle();
    const wrapped = async (message: object, ...rest: unknown[]): Promise<unknown> => {
      if (insideHandler.getStore()) return execute(message, ...rest);
      await settle();
      return insideHandler.run(true, () => execute(message, ...rest));
    };
    Object.defineProperty(bus, 'execute', { value: wrapped, configurable: true, writable: true });
  }
}
