import type { CredentialKind } from '../../../core/auth/principal';
import { ForbiddenError } from '../../../core/http/domain-errors';

/**
 * Keys are account-level and managed with a key of the same account that holds
 * account:admin (the guard checks the scope, so a narrow key cannot list or revoke the
 * account's other keys). Member tokens (one member of one workspace) and OAuth tokens (a
 * third-party app) must not mint or manage long-lived account credentials, whatever
 * scopes they carry: every key command and query applies this first.
 */
export function assertManagesKeys(credentialKind: CredentialKind): void {
  if (credentialKind !== 'api_key')
    throw new ForbiddenError(
      'API keys are managed with an API key of the account; this credential cannot manage them',
    );
}
