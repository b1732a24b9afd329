import { DataSource } from 'typeorm';

/**
 * Integer public ids come from PostgreSQL sequences, taken in the command handler
 * before the append (DESIGN.md, "Uniqueness and identifiers"). A failed append burns
 * the number; ids are unique, not gapless.
 */
export async function nextId(db: DataSource, sequence: string): Promise<number> {
  if (!/^[a-z_]+$/.test(sequence)) throw new Error(`Bad sequence name ${sequence}`);
  const rows = (await db.query(`SELECT nextval('${sequence}')::int AS id`)) as { id: number }[];
  return rows[0].id;
}

/** `count` ids in one round trip, for bulk commands (member import). */
export async function nextIds(db: DataSource, sequence: string, count: number): Promise<number[]> {
  if (!/^[a-z_]+$/.test(sequence)) throw new Error(`Bad sequence name ${sequence}`);
  if (count <= 0) return [];
  const rows = (await db.query(`SELECT nextval('${sequence}')::int AS id FROM generate_series(1, $1)`, [
    count,
  ])) as { id: number }[];
  return rows.map((r) => r.id);
}
