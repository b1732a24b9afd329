/**
 * An error of the OAuth protocol (RFC 6749 §4.1.2.1, §5.2; RFC 7009; RFC 7591 §3.2.2),
 * answered as `{error, error_description}` plus the service's `{detail}`, so clients of
 * either convention read it.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  body(): { error: string; error_description: string; detail: string } {
    return {
      error: this.error,
      error_description: this.description,
      detail: `${this.error}: ${this.description}`,
    };
  }
}

export const invalidClient = (description = 'Client authentication failed'): OAuthError =>
  new OAuthError('invalid_client', description, 401);

/** A request parameter as one string; absent, empty or repeated ones are refused (RFC 6749 §3.1). */
export function param(body: Record<string, unknown>, name: string, required: true): string;
export function param(body: Record<string, unknown>, name: string, required?: false): string | undefined;
export function param(body: Record<string, unknown>, name: string, required = false): string | undefined {
  const v = body[name];
  if (v === undefined || v === '') {
    if (required) throw new OAuthError('invalid_request', `${name}: required`);
    return undefined;
  }
  if (typeof v !== 'string')
    throw new OAuthError('invalid_request', `${name}: must be given once, as a string`);
  if (v.length > 4096) throw new OAuthError('invalid_request', `${name}: too long`);
  return v;
}
