import { JsonLogger } from './logging/json-logger';

/**
 * SIGTERM/SIGINT: stop taking work, let in-flight work finish (bounded), close pools
 * and queues, exit 0. A second signal exits at once.
 */
export function onShutdownSignal(close: () => Promise<void>, logger: JsonLogger, timeoutMs: number): void {
  let closing = false;
  const handler = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    logger.event('info', { msg: 'shutting down', signal });
    const timer = setTimeout(() => {
      logger.event('error', { msg: 'shutdown timed out', timeoutMs });
      process.exit(1);
    }, timeoutMs + 5000);
    timer.unref();
    close().then(
      () => {
        logger.event('info', { msg: 'stopped' });
        process.exit(0);
      },
      (err: unknown) => {
        logger.error(err instanceof Error ? err : String(err), 'shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/** Prints one line for configuration errors, a logged error otherwise, then exits 1. */
export function exitOnStartupError(err: unknown): never {
  if (err instanceof Error && err.name === 'ConfigError') {
    process.stderr.write(`Invalid configuration: ${err.message}\n`);
  } else {
    new JsonLogger('error').error(err instanceof Error ? err : String(err), 'startup');
  }
  process.exit(1);
}
