import { grants } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';
import type { RuleEventType } from './event-types';

/**
 * What a rule delivers is data its receiver reads, so a rule may deliver only what its
 * author could read through the API: automations:write alone must not let a caller hand
 * its receiver more than the caller holds. Each event family needs the read scope of its
 * resource, checked when the rule is saved (403) and again at every delivery against the
 * author's reach as it then stands (RuleAuthor: the saving credential's scopes ∩ the
 * author member's current role), so a demoted or removed author's rule stops delivering.
 *
 * The record events send every record of the workspace, field values (PHI) included,
 * whoever owns it and whatever the type's visibility: only a caller who could read all of
 * them (records:admin) may point such a rule anywhere.
 */
const REQUIRED_SCOPE: Readonly<Record<RuleEventType, string>> = {
  'data_record:created': 'records:admin',
  'data_record:updated': 'records:admin',
  'data_record:changed': 'records:admin',
  'record.deleted': 'records:admin',
  'member:updated': 'members:read',
  'chat:created': 'chats:read',
  'chat:summary': 'chats:read',
  'chat.message.created': 'chats:read',
  'call:started': 'chats:read',
  'call:completed': 'chats:read',
  'call:summary': 'chats:read',
  'message:received': 'chats:read',
  'email.received': 'chats:read',
  'task.created': 'assignments:read',
  'task.updated': 'assignments:read',
  'workflow.completed': 'workflows:read',
  'workflow.failed': 'workflows:read',
};

/** Admin-only tasks exist only for holders of assignments:admin (work's access policy). */
const ADMIN_TASK_SCOPE = 'assignments:admin';

/** The scope a rule of this type needs (unknown types: automations:admin, the safe side). */
export function requiredScopeFor(eventType: string): string {
  return Object.hasOwn(REQUIRED_SCOPE, eventType)
    ? REQUIRED_SCOPE[eventType as RuleEventType]
    : 'automations:admin';
}

export function assertMayDeliver(scopes: readonly string[], eventType: RuleEventType, field: string): void {
  const scope = requiredScopeFor(eventType);
  if (!grants(scopes, scope))
    throw new ForbiddenError(
      `${field}: a rule for ${eventType} delivers data read with the scope ${scope}, which this credential lacks`,
    );
}

/**
 * Why the author may not receive this delivery's body now (null: they may). `body` is the
 * exact JSON sent; for the task events an admin-only task needs assignments:admin too.
 */
export function deliveryRefusal(scopes: readonly string[], eventType: string, body: string): string | null {
  const scope = requiredScopeFor(eventType);
  if (!grants(scopes, scope)) return `the rule's author no longer holds ${scope}`;
  if (eventType.startsWith('task.') && !grants(scopes, ADMIN_TASK_SCOPE) && isAdminTask(body))
    return `the task is admin-only and the rule's author does not hold ${ADMIN_TASK_SCOPE}`;
  return null;
}

function isAdminTask(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as {
      task?: { isAdmin?: boolean };
      data?: { task?: { isAdmin?: boolean } };
    };
    return Boolean(parsed.task?.isAdmin ?? parsed.data?.task?.isAdmin);
  } catch {
    return true;
  }
}

/**
 * The exact body of a delivery is the resource itself: the webhook log shows it only to
 * those who could read it through the API (the same scope a rule of its type needs), not
 * to webhooks:read alone.
 */
export function mayReadDeliveryBody(scopes: readonly string[], eventType: string): boolean {
  return grants(scopes, requiredScopeFor(eventType));
}
