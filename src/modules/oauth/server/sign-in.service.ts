import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { UnauthorizedError } from '../../../core/http/domain-errors';
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
    private readonly limiter: SignInLimiter,
  ) {}

  /** The account signed in, or UnauthorizedError / TooManyRequestsError. */
  async signIn(email: string, password: string, address: string): Promise<string> {
    const reservations = await this.limiter.attempt({ email, address });
    const candidates =
      email.length <= 254 && password.length <= PASSWORD_MAX_LENGTH * 4
        ? ((await this.db.query(
            `SELECT l.account_uuid, p.password_hash
               FROM oauth_account_logins l JOIN oauth_passwords p ON p.account_uuid = l.account_uuid
              WHERE lower(l.email) = lower($1) ORDER BY l.created_at LIMIT ${MAX_CANDIDATES}`,
            [email.trim()],
          )) as { account_uuid: string; password_hash: string }[])
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
}
