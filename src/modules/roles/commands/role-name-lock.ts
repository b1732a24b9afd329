import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConflictError } from '../../../core/http/domain-errors';

/** Arbitrary first key of the two-key advisory lock, so role locks never meet other features' locks. */
const LOCK_CLASS = 0x524f4c45; // "ROLE"
/**
 * Lock holders per process. Each holds one pooled connection while it works and needs
 * one more at a time, so this many holders stay well inside the pool (10): waiting for
 * the lock never starves the holder of a connection.
 */
const MAX_HOLDERS = 3;
const WAIT_LIMIT_MS = 10_000;

/**
 * Serialises the role-name checks of one workspace: the check reads the read model, so
 * two concurrent creates of "Sales" must not both pass it. Held from the check until
 * the projection shows the new name (the caller settles inside), then released. A
 * session lock outside any transaction, so it holds back no projection (DESIGN.md, the
 * pair cursor). Waiters poll with pg_try_advisory_lock instead of blocking, so they do
 * not hold connections while they wait.
 */
@Injectable()
export class RoleNameLock {
  private holders = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly db: DataSource) {}

  async inWorkspace<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    await this.slot();
    try {
      const deadline = Date.now() + WAIT_LIMIT_MS;
      for (;;) {
        const runner = this.db.createQueryRunner();
        await runner.connect();
        let locked = false;
        try {
          const [row] = (await runner.query(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked`, [
            LOCK_CLASS,
            workspaceId,
          ])) as {
            locked: boolean;
          }[];
          locked = row.locked;
          if (locked) return await fn();
        } finally {
          if (locked)
            await runner
              .query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [LOCK_CLASS, workspaceId])
              .catch(() => undefined);
          await runner.release();
        }
        if (Date.now() > deadline)
          throw new ConflictError('Another change to the roles of this workspace is in progress; retry');
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
      }
    } finally {
      this.release();
    }
  }

  private async slot(): Promise<void> {
    if (this.holders < MAX_HOLDERS) {
      this.holders++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.holders--;
  }
}
