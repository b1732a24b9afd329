import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import { assertPassesRoleGate, checkRoleGate, DEFAULT_ROLE_GATE_MESSAGE } from './role-gate.policy';

describe('Member Role Gate', () => {
  const gate = { roleIds: [3, 7], message: 'Only coordinators run intake' };

  it('lets any member through when the workflow has no gate', () => {
    expect(() => assertPassesRoleGate(null, 42)).not.toThrow();
  });

  it('lets a member whose role is listed through', () => {
    expect(() => assertPassesRoleGate(gate, 7)).not.toThrow();
  });

  it("refuses everyone else with the gate's own message", () => {
    let thrown: unknown;
    try {
      assertPassesRoleGate(gate, 4);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ForbiddenError);
    expect((thrown as Error).message).toBe('Only coordinators run intake');
  });

  it('counts the roles a listed role was merged into as listed', () => {
    expect(() => assertPassesRoleGate(gate, 9, [3, 7, 9])).not.toThrow();
    expect(() => assertPassesRoleGate(gate, 3, [7])).toThrow(ForbiddenError);
  });

  it('stores a gate with each role once, a trimmed message or the default one', () => {
    expect(checkRoleGate({ roleIds: [7, 3, 7], message: '  Ask your coordinator ' }, [])).toEqual({
      roleIds: [7, 3],
      message: 'Ask your coordinator',
    });
    expect(checkRoleGate({ roleIds: [3] }, [])).toEqual({ roleIds: [3], message: DEFAULT_ROLE_GATE_MESSAGE });
  });

  it('refuses an empty gate, unknown roles and an empty message, naming the field', () => {
    expect(() => checkRoleGate({ roleIds: [] }, [])).toThrow(
      /^roleGate\.roleIds: must list at least one role$/,
    );
    expect(() => checkRoleGate({ roleIds: [3, 99] }, [99])).toThrow(
      /^roleGate\.roleIds: 99 is not a role of this workspace$/,
    );
    expect(() => checkRoleGate({ roleIds: [3], message: '   ' }, [])).toThrow(ValidationError);
  });
});
