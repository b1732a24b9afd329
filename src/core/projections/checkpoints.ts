import type { EntityManager } from 'typeorm';
import type { Position } from '../event-store/event-store.port';
import { beforeCheckpointWrite } from './subscriber-loop';

export type SubscriberKind = 'projection' | 'reactor' | 'rebuild';

type Queryable = Pick<EntityManager, 'query'>;

interface Row {
  position_commit: string;
  position_prepare: string;
}

export async function readCheckpoint(
  db: Queryable,
  name: string,
  forUpdate = false,
): Promise<Position | undefined> {
  const rows = (await db.query(
    `SELECT position_commit, position_prepare FROM subscriber_checkpoints WHERE name = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [name],
  )) as Row[];
  if (!rows.length) return undefined;
  const position = { commit: BigInt(rows[0].position_commit), prepare: BigInt(rows[0].position_prepare) };
  // (0, 0) marks a row created before its first batch: nothing handled yet.
  return position.commit === 0n && position.prepare === 0n ? undefined : position;
}

export async function writeCheckpoint(
  db: Queryable,
  name: string,
  kind: SubscriberKind,
  position: Position,
  handled: number,
): Promise<void> {
  beforeCheckpointWrite(name);
  await db.query(
    `INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare, events_handled, updated_at)
     VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (name) DO UPDATE SET position_commit = EXCLUDED.position_commit,
       position_prepare = EXCLUDED.position_prepare,
       events_handled = subscriber_checkpoints.events_handled + EXCLUDED.events_handled,
       updated_at = now()`,
    [name, kind, position.commit.toString(), position.prepare.toString(), handled],
  );
}

/**
 * Moves a checkpoint from `expected` to `position` in one statement (compare and set):
 * false, and nothing written, when the stored checkpoint is no longer `expected` (absent:
 * no row yet, or the (0, 0) row of a subscriber before its first batch). A reactor's
 * batch so costs one round trip for its checkpoint, where a read then a write took two,
 * and a leader that lost its lock unknowingly can never move the checkpoint back.
 */
export async function advanceCheckpoint(
  db: Queryable,
  name: string,
  kind: SubscriberKind,
  expected: Position | undefined,
  position: Position,
  handled: number,
): Promise<boolean> {
  beforeCheckpointWrite(name);
  const values = [name, position.commit.toString(), position.prepare.toString(), handled];
  // As SELECTs over the CTE: TypeORM hands back an UPDATE's result as [rows, count].
  const rows = (await db.query(
    expected
      ? `WITH moved AS (
           UPDATE subscriber_checkpoints SET position_commit = $2, position_prepare = $3,
             events_handled = events_handled + $4, updated_at = now()
           WHERE name = $1 AND position_commit = $5 AND position_prepare = $6 RETURNING name)
         SELECT name FROM moved`
      : `WITH moved AS (
           INSERT INTO subscriber_checkpoints AS c (name, kind, position_commit, position_prepare, events_handled, updated_at)
           VALUES ($1, $5, $2, $3, $4, now())
           ON CONFLICT (name) DO UPDATE SET position_commit = EXCLUDED.position_commit,
             position_prepare = EXCLUDED.position_prepare,
             events_handled = c.events_handled + EXCLUDED.events_handled, updated_at = now()
           WHERE c.position_commit = 0 AND c.position_prepare = 0 RETURNING name)
         SELECT name FROM moved`,
    expected ? [...values, expected.commit.toString(), expected.prepare.toString()] : [...values, kind],
  )) as unknown[];
  return rows.length > 0;
}

export function samePosition(a: Position | undefined, b: Position | undefined): boolean {
  if (!a || !b) return a === b;
  return a.commit === b.commit && a.prepare === b.prepare;
}

/** Channel on which a committed batch announces itself (read-your-writes waiters listen). */
export const CHECKPOINT_CHANNEL = 'subscriber_checkpoint';
