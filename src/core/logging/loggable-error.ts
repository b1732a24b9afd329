/** A code as drivers and Node give them (a PostgreSQL SQLSTATE `23505`, `ECONNREFUSED`): never free text. */
const CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * An error as a log line may show it: its class, its code and the stack's frames, never
 * its message. A driver's message can quote the values a statement carried (PostgreSQL's
 * `invalid input syntax for type integer: "…"`, a unique violation's `Key (…)=(…)`), and
 * record field values are PHI; the first line of `stack` repeats the message, so only the
 * `at …` frames are kept. Nothing else the error carries (TypeORM's `parameters`, pg's
 * `detail`) is read.
 */
export function loggableError(err: unknown): { name: string; code?: string; stack?: string } {
  if (!(err instanceof Error)) return { name: typeof err };
  const code = (err as { code?: unknown }).code;
  const frames = err.stack
    ?.split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
  return {
    name: String(err.name).slice(0, 100),
    ...((typeof code === 'string' || typeof code === 'number') && CODE.test(String(code))
      ? { code: String(code) }
      : {}),
    ...(frames ? { stack: frames } : {}),
  };
}
