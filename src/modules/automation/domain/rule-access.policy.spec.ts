import { ForbiddenError } from '../../../core/http/domain-errors';
import { assertMayDeliver, mayReadDeliveryBody } from './rule-access.policy';

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

  it("shows a record delivery's body to records:admin only", () => {
    expect(mayReadDeliveryBody(['webhooks:read', 'records:write'], 'data_record:updated')).toBe(false);
    expect(mayReadDeliveryBody(['webhooks:read', 'records:admin'], 'data_record:updated')).toBe(true);
    expect(mayReadDeliveryBody(['webhooks:read'], 'member:updated')).toBe(true);
  });
});
