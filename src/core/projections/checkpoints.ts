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

export function samePosition(a: Position | undefined, b: Position | undefined): boolean {
  if (!a || !b) return a === b;
  return a.commit === b.commit && a.prepare === b.prepare;
}

/** Channel on which a committed batch announces itself (read-your-writes waiters listen). */
export const CHECKPOINT_CHANNEL = 'subscriber_checkpoint';
