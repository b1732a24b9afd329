import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { TooManyRequestsError } from '../../../core/http/domain-errors';
import { RateLimiter, Reservation } from '../../../core/rate-limit/rate-limiter';

const BUCKET = 'oauth-sign-in';

/**
 * Password attempts, limited per account (by the email typed, known or not, so the limit
 * says nothing about which emails exist) and per client address: SIGN_IN_ATTEMPTS_PER_MINUTE
 * failed attempts each; a success takes its attempt back. Checking a current password on
 * PUT /me/password counts against the account the same way.
 */
@Injectable()
export class SignInLimiter {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly limiter: RateLimiter,
  ) {}

  /** Reserves one attempt for each subject; throws 429 when any is used up. */
  async attempt(subjects: {
    email?: string;
    accountUuid?: string;
    address?: string;
  }): Promise<Reservation[]> {
    const keys: string[] = [];
    if (subjects.email !== undefined)
      keys.push(`email:${createHash('sha256').update(subjects.email.trim().toLowerCase()).digest('hex')}`);
    if (subjects.accountUuid !== undefined) keys.push(`account:${subjects.accountUuid}`);
    if (subjects.address !== undefined) keys.push(`ip:${subjects.address}`);
    const limit = this.config.signInAttemptsPerMinute;
    const reservations = await Promise.all(keys.map((k) => this.limiter.reserve(BUCKET, k, limit)));
    const refused = reservations.filter((r) => !r.admitted);
    if (refused.length) {
      reservations.filter((r) => r.admitted).forEach((r) => r.refund());
      throw new TooManyRequestsError(
        'Too many sign-in attempts; try again later',
        Math.max(...refused.map((r) => r.retryAfterSeconds)),
      );
    }
    return reservations;
  }
}
