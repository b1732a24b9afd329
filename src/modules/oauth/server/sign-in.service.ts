import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { UnauthorizedError } from '../../../core/http/domain-errors';
import { FindAccountsByRegisteredEmailQuery } from '../../identity';
import { decoyHash, PASSWORD_MAX_LENGTH, verifyPassword } from '../domain/password';
import { SignInLimiter } from './sign-in-limiter';

/** At most this many accounts share an email (signups in several workspaces); each is tried. */
const MAX_CANDIDATES = 5;

export const SIGN_IN_REFUSED = 'The email or password is not correct';

/**
 * Password sign-in for the authorization server's pages. An unknown email, an account
 * without a password and a wrong password all answer the same words after the same work
 * (a decoy hash is checked when there is nothing to check), so the page tells nobody which
 * emails have accounts.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
    private readonly limiter: SignInLimiter,
  ) {}

  /** The account signed in, or UnauthorizedError / TooManyRequestsError. */
  async signIn(email: string, password: string, address: string): Promise<string> {
    const reservations = await this.limiter.attempt({ email, address });
    const candidates =
      email.length <= 254 && password.length <= PASSWORD_MAX_LENGTH * 4
        ? await this.candidates(email.trim())
        : [];
    if (!candidates.length) {
      await verifyPassword(password, await decoyHash());
      throw new UnauthorizedError(SIGN_IN_REFUSED);
    }
    for (const c of candidates) {
      if (await verifyPassword(password, c.password_hash)) {
        reservations.forEach((r) => r.refund());
        return c.account_uuid;
      }
    }
    throw new UnauthorizedError(SIGN_IN_REFUSED);
  }

  /**
   * The accounts registered with the email (identity's) that have a password, oldest first,
   * at most MAX_CANDIDATES.
   */
  private async candidates(email: string): Promise<{ account_uuid: string; password_hash: string }[]> {
    const accounts = await this.queries.execute<FindAccountsByRegisteredEmailQuery, string[]>(
      new FindAccountsByRegisteredEmailQuery(email),
    );
    if (!accounts.length) return [];
    const rows = (await this.db.query(
      `SELECT account_uuid::text AS account_uuid, password_hash FROM oauth_passwords WHERE account_uuid = ANY($1::uuid[])`,
      [accounts],
    )) as { account_uuid: string; password_hash: string }[];
    const hashes = new Map(rows.map((r) => [r.account_uuid, r.password_hash]));
    return accounts
      .filter((a) => hashes.has(a))
      .slice(0, MAX_CANDIDATES)
      .map((a) => ({ account_uuid: a, password_hash: hashes.get(a)! }));
  }
}
