import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import type { RoleGate } from './work.events';

export const ROLE_GATE_MAX_ROLES = 100;
export const ROLE_GATE_MESSAGE_MAX = 500;
/** What a refused member reads when the gate was set without a message of its own. */
export const DEFAULT_ROLE_GATE_MESSAGE = 'Your role may not start this workflow';

/**
 * A gate as the workflow stores it: at least one role, each once, in the order given, and
 * a message. `unknownRoleIds` are those the handler found not to be live roles of the
 * workflow's workspace (a gate naming another tenant's role is refused like a typo).
 */
export function checkRoleGate(
  gate: { roleIds: readonly number[]; message?: string },
  unknownRoleIds: readonly number[],
): RoleGate {
  const roleIds = [...new Set(gate.roleIds)];
  if (!roleIds.length) throw new ValidationError('roleGate.roleIds: must list at least one role');
  if (roleIds.length > ROLE_GATE_MAX_ROLES)
    throw new ValidationError(`roleGate.roleIds: must list at most ${ROLE_GATE_MAX_ROLES} roles`);
  if (unknownRoleIds.length)
    throw new ValidationError(
      `roleGate.roleIds: ${unknownRoleIds.join(', ')} ${unknownRoleIds.length === 1 ? 'is not a role' : 'are not roles'} of this workspace`,
    );
  const message = (gate.message ?? DEFAULT_ROLE_GATE_MESSAGE).trim();
  if (!message) throw new ValidationError('roleGate.message: must not be empty');
  if (message.length > ROLE_GATE_MESSAGE_MAX)
    throw new ValidationError(`roleGate.message: must be at most ${ROLE_GATE_MESSAGE_MAX} characters`);
  return { roleIds, message };
}

/**
 * Member Role Gate (SPEC "Scopes", Workflows; special case 8): with a gate, only a member
 * whose role is listed may start the workflow; everyone else is refused with the gate's
 * own message. Without one any member may (the self-access rule). `admitted` are the role
 * ids that count as listed: the gate's own, followed through role merges (a merge moves
 * the duplicate's references onto its target).
 */
export function assertPassesRoleGate(
  gate: RoleGate | null,
  memberRoleId: number,
  admitted: readonly number[] = gate?.roleIds ?? [],
): void {
  if (!gate) return;
  if (!admitted.includes(memberRoleId)) throw new ForbiddenError(gate.message);
}
