import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { hashSecret } from '../domain/secrets';

export const SESSION_COOKIE = 'ws_oauth_session';
export const CSRF_COOKIE = 'ws_oauth_csrf';
const SESSION_TTL_S = 12 * 3600;

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** The form field that proves a POST came from our own page: derived from a cookie only our page could read. */
export function csrfTokenFor(cookieValue: string): string {
  return createHash('sha256').update(`csrf:${cookieValue}`).digest('base64url');
}

export function csrfMatches(cookieValue: string | undefined, given: unknown): boolean {
  if (!cookieValue || typeof given !== 'string') return false;
  const a = Buffer.from(csrfTokenFor(cookieValue));
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The browser session of the authorization pages: a random cookie (HttpOnly, SameSite=Lax,
 * Secure when the issuer is https, scoped to the OAuth paths) whose SHA-256 is stored with
 * the account. Forms carry a CSRF field derived from the cookie (csrfTokenFor): the sign-in
 * form from a pre-session cookie, the consent form from the session's.
 */
@Injectable()
export class BrowserSessions {
  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private cookiePath(): string {
    return `${new URL(this.config.publicBaseUrl).pathname.replace(/\/$/, '')}/oauth`;
  }

  private cookie(name: string, value: string, maxAge: number): string {
    const secure = this.config.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
    return `${name}=${value}; Path=${this.cookiePath()}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
  }

  async start(reply: FastifyReply, accountUuid: string): Promise<string> {
    const value = randomBytes(32).toString('base64url');
    await this.db.query(
      `INSERT INTO oauth_sessions (id_hash, account_uuid, created_at, expires_at)
       VALUES ($1, $2, now(), now() + make_interval(secs => $3))`,
      [hashSecret(value), accountUuid, SESSION_TTL_S],
    );
    void reply.header('Set-Cookie', this.cookie(SESSION_COOKIE, value, SESSION_TTL_S));
    return value;
  }

  /** The signed-in account and the session cookie, or undefined. */
  async current(req: FastifyRequest): Promise<{ accountUuid: string; cookie: string } | undefined> {
    const value = readCookie(req, SESSION_COOKIE);
    if (!value || value.length > 100) return undefined;
    const rows = (await this.db.query(
      `SELECT account_uuid FROM oauth_sessions WHERE id_hash = $1 AND expires_at > now()`,
      [hashSecret(value)],
    )) as { account_uuid: string }[];
    return rows[0] ? { accountUuid: rows[0].account_uuid, cookie: value } : undefined;
  }

  /** The pre-session CSRF cookie of the sign-in form, set when absent. */
  signInCsrf(req: FastifyRequest, reply: FastifyReply): string {
    let value = readCookie(req, CSRF_COOKIE);
    if (!value || value.length > 100) {
      value = randomBytes(32).toString('base64url');
      void reply.header('Set-Cookie', this.cookie(CSRF_COOKIE, value, SESSION_TTL_S));
    }
    return csrfTokenFor(value);
  }
}
