import { DataSource } from 'typeorm';

/**
 * Another custom role of the workspace whose name equals `name` up to case, blanks, `_`
 * and `-` (domain/role-aliases.ts normalizeRoleName). Built-in roles are not looked at:
 * only their exact names are reserved (checked by the decider), so a custom "manager"
 * can sit beside the built-in Manager until it is merged into it.
 */
export async function customRoleNamed(
  db: DataSource,
  workspaceId: string,
  name: string,
  exceptRoleId?: number,
): Promise<number | undefined> {
  const rows = (await db.query(
    `SELECT id FROM member_roles
      WHERE workspace_id = $1 AND id <> $3 AND built_in IS NULL
        AND regexp_replace(lower(btrim(name)), '[[:space:]_-]+', ' ', 'g') = regexp_replace(lower(btrim($2)), '[[:space:]_-]+', ' ', 'g')
      ORDER BY id LIMIT 1`,
    [workspaceId, name, exceptRoleId ?? 0],
  )) as { id: number }[];
  return rows[0]?.id;
}
