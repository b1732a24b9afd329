/** Where an upload can be cut short by a crash, in order. */
export type UploadCrashPoint = 'staged' | 'recorded';

/**
 * Test-only fault injection, for the crash spec's child processes (as core's
 * SPINE_TEST_EXIT_BEFORE_CHECKPOINT). With NODE_ENV=test and FILES_TEST_CRASH_AT=<point>,
 * the process SIGKILLs itself there in every upload: `staged` once the bytes are staged and
 * nothing is appended, `recorded` once FileUploaded is appended and before the commit.
 */
export function crashPoint(point: UploadCrashPoint): void {
  if (process.env.NODE_ENV === 'test' && process.env.FILES_TEST_CRASH_AT === point)
    process.kill(process.pid, 'SIGKILL');
}
