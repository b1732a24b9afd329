import { ForbiddenError } from '../../../core/http/domain-errors';
import { assertMayDeliver } from './rule-access.policy';

describe('rule access policy', () => {
  it('needs records:admin for the record events, and nothing more for the others', () => {
    for (const type of [
      'data_record:created',
      'data_record:updated',
      'data_record:changed',
      'record.deleted',
    ] as const) {
      expect(() => assertMayDeliver(['automations:write', 'records:write'], type, 'eventType')).toThrow(
        ForbiddenError,
      );
      expect(() => assertMayDeliver(['automations:write', 'records:admin'], type, 'eventType')).not.toThrow();
    }
    expect(() => assertMayDeliver(['automations:write'], 'member:updated', 'eventType')).not.toThrow();
    expect(() => assertMayDeliver([], 'data_record:created', 'trigger')).toThrow(/^trigger: /);
  });
});
