import { ForbiddenError } from '../../../core/http/domain-errors';
import { CANONICAL_EVENT_TYPES } from './event-types';
import {
  assertMayDeliver,
  deliveryRefusal,
  mayReadDeliveryBody,
  requiredScopeFor,
} from './rule-access.policy';

describe('rule access policy', () => {
  it('needs records:admin for the record events', () => {
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
    expect(() => assertMayDeliver([], 'data_record:created', 'trigger')).toThrow(/^trigger: /);
  });

  it("needs the read scope of each other family's resource", () => {
    const cases: [string, string][] = [
      ['member:updated', 'members:read'],
      ['chat:created', 'chats:read'],
      ['chat:summary', 'chats:read'],
      ['chat.message.created', 'chats:read'],
      ['call:started', 'chats:read'],
      ['call:completed', 'chats:read'],
      ['call:summary', 'chats:read'],
      ['message:received', 'chats:read'],
      ['email.received', 'chats:read'],
      ['task.created', 'assignments:read'],
      ['task.updated', 'assignments:read'],
      ['workflow.completed', 'workflows:read'],
      ['workflow.failed', 'workflows:read'],
    ];
    for (const [type, scope] of cases) {
      expect(requiredScopeFor(type)).toBe(scope);
      expect(() => assertMayDeliver(['automations:write'], type as never, 'eventType')).toThrow(
        new RegExp(`the scope ${scope}`),
      );
      expect(() => assertMayDeliver(['automations:write', scope], type as never, 'eventType')).not.toThrow();
    }
    // Every type a rule accepts has its scope (none falls to the automations:admin default).
    for (const type of CANONICAL_EVENT_TYPES) expect(requiredScopeFor(type)).not.toBe('automations:admin');
  });

  it('refuses a delivery the author can no longer read, and admin-only tasks without assignments:admin', () => {
    expect(deliveryRefusal(['members:read'], 'member:updated', '{}')).toBeNull();
    expect(deliveryRefusal(['chats:read'], 'member:updated', '{}')).toMatch(/members:read/);
    const adminTask = JSON.stringify({ task: { id: 1, isAdmin: true } });
    const plainTask = JSON.stringify({ task: { id: 1, isAdmin: false } });
    const enveloped = JSON.stringify({ data: { task: { id: 1, isAdmin: true } } });
    expect(deliveryRefusal(['assignments:read'], 'task.created', plainTask)).toBeNull();
    expect(deliveryRefusal(['assignments:read'], 'task.created', adminTask)).toMatch(/admin-only/);
    expect(deliveryRefusal(['assignments:read'], 'task.updated', enveloped)).toMatch(/admin-only/);
    expect(deliveryRefusal(['assignments:admin'], 'task.created', adminTask)).toBeNull();
  });

  it("shows a delivery's body only to those who could read its resource", () => {
    expect(mayReadDeliveryBody(['webhooks:read', 'records:write'], 'data_record:updated')).toBe(false);
    expect(mayReadDeliveryBody(['webhooks:read', 'records:admin'], 'data_record:updated')).toBe(true);
    expect(mayReadDeliveryBody(['webhooks:read'], 'member:updated')).toBe(false);
    expect(mayReadDeliveryBody(['webhooks:read', 'members:read'], 'member:updated')).toBe(true);
    expect(mayReadDeliveryBody(['webhooks:read', 'chats:read'], 'chat:created')).toBe(true);
  });
});
