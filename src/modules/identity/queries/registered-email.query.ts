import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';

/** More accounts than one email ever has (one signup per workspace); a bound, not a rule. */
const MAX_ACCOUNTS = 1000;

/**
 * The accounts registered with an email (compared lower-cased), oldest first: whom a
 * password sign-in may be (oauth). The email an account registered with, not one it set
 * itself later (`PUT /me`), which is unproven.
 */
export class FindAccountsByRegisteredEmailQuery {
  constructor(readonly email: string) {}
}

@QueryHandler(FindAccountsByRegisteredEmailQuery)
export class FindAccountsByRegisteredEmailHandler implements IQueryHandler<
  FindAccountsByRegisteredEmailQuery,
  string[]
> {
  constructor(private readonly db: DataSource) {}

  async execute(q: FindAccountsByRegisteredEmailQuery): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT uuid::text AS uuid FROM accounts
        WHERE lower(registered_email) IN (lower($1), lower($2)) AND registered_email IS NOT NULL
        ORDER BY created_at, uuid LIMIT ${MAX_ACCOUNTS}`,
      // In the form identity stores addresses now (NFC, contact.ts), so an NFD spelling finds
      // the account too; and as typed, for an account registered before addresses were NFC.
      [q.email.trim().normalize('NFC'), q.email.trim()],
    )) as { uuid: string }[];
    return rows.map((r) => r.uuid);
  }
}
