import { ForbiddenError } from '../../../core/http/domain-errors';
import { assertManagesKeys } from './key-management.policy';

describe('key management policy', () => {
  it('lets API keys manage keys and refuses member tokens and OAuth tokens with a 403', () => {
    expect(() => assertManagesKeys('api_key')).not.toThrow();
    for (const kind of ['member_token', 'oauth'] as const)
      expect(() => assertManagesKeys(kind)).toThrow(
        new ForbiddenError(
          'API keys are managed with an API key of the account; this credential cannot manage them',
        ),
      );
  });
});
