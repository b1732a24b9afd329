import { MigrationInterface, QueryRunner } from 'typeorm';

/** When the expiry worker recorded a token's or an invitation's lapse (MemberTokenExpired, InvitationExpired). */
export class IdentityExpiry1764000006200 implements MigrationInterface {
  name = 'IdentityExpiry1764000006200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE member_tokens ADD COLUMN expired_at timestamptz`);
    await q.query(`ALTER TABLE invitations ADD COLUMN expired_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invitations DROP COLUMN expired_at`);
    await q.query(`ALTER TABLE member_tokens DROP COLUMN expired_at`);
  }
}
