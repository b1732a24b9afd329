import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom role names that exist before role names became claims (domain/role-name-claim.ts)
 * take their claim from the read model: the same normalisation (case, blanks, `_`, `-`)
 * and hash as the code, the oldest role first should two ever share a name.
 * EventStoreDB keeps its claims in streams, which a migration cannot write: there a role
 * created before this change holds no claim until it is renamed.
 */
export class RoleNameClaims1764000006100 implements MigrationInterface {
  name = 'RoleNameClaims1764000006100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO claims (scope, kind, value_hash, owner)
      SELECT workspace_id::text, 'role_name',
             encode(sha256(convert_to(regexp_replace(lower(btrim(name)), '[[:space:]_-]+', ' ', 'g'), 'UTF8')), 'hex'),
             'memberrole-' || id
        FROM member_roles WHERE built_in IS NULL ORDER BY id
      ON CONFLICT DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM claims WHERE kind = 'role_name'`);
  }
}
