import { ALL_SCOPES } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';
import { assertNoEscalation, scopesNotHeld } from './escalation.policy';

describe('escalation policy', () => {
  it('lets a caller grant what its scopes imply (admin ⊇ write ⊇ read), nothing more', () => {
    const held = ['member_roles:admin', 'members:write'];
    expect(scopesNotHeld(held, ['member_roles:read', 'members:write', 'members:read'])).toEqual([]);
    expect(scopesNotHeld(held, ['members:admin', 'chats:read', 'members:read'])).toEqual([
      'members:admin',
      'chats:read',
    ]);
    expect(() => assertNoEscalation(held, ['member_roles:write'], 'permissions')).not.toThrow();
  });

  it('refuses with 403 naming the field and the scopes lacked, the first few of a long list', () => {
    const held = ['member_roles:admin', 'members:write'];
    let thrown: unknown;
    try {
      assertNoEscalation(held, ALL_SCOPES, 'targetRoleId', 'role Manager');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ForbiddenError);
    expect((thrown as Error).message).toBe(
      'targetRoleId: role Manager grants agents:read, agents:write, agents:admin, analytics:read, analytics:write and 62 more, which this credential does not hold; nobody can grant more than they hold',
    );
  });
});
