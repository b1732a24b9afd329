import { LoggerService } from '@nestjs/common';
import { LogLevel } from '../config/config';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/**
 * One JSON object per line on stdout. Never pass request bodies or credentials in;
 * callers log ids, routes and error causes only.
 */
export class JsonLogger implements LoggerService {
  constructor(private readonly level: LogLevel = 'info') {}

  private write(
    level: Exclude<LogLevel, 'silent'>,
    message: unknown,
    context?: string,
    extra?: Record<string, unknown>,
  ) {
    if (RANK[level] < RANK[this.level]) return;
    const line: Record<string, unknown> = { level, time: new Date().toISOString() };
    if (context) line.context = context;
    if (message instanceof Error) {
      line.msg = message.message;
      line.err = { name: message.name, message: message.message, stack: message.stack };
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(line, message);
    } else {
      line.msg = String(message);
    }
    if (extra) Object.assign(line, extra);
    process.stdout.write(
      JSON.stringify(line, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) + '\n',
    );
  }

  /** Whether entries of `level` are written (a caller may skip building one that is not). */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return RANK[level] >= RANK[this.level];
  }

  /** Structured entry point used by our own code. */
  event(level: Exclude<LogLevel, 'silent'>, fields: Record<string, unknown>): void {
    this.write(level, fields);
  }

  log(message: unknown, context?: string): void {
    this.write('info', message, typeof context === 'string' ? context : undefined);
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    const ctx = context ?? (stackOrContext && !stackOrContext.includes('\n') ? stackOrContext : undefined);
    const stack = stackOrContext && stackOrContext.includes('\n') ? stackOrContext : undefined;
    this.write('error', message, ctx, stack ? { stack } : undefined);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
}

export const LOGGER = Symbol('LOGGER');
