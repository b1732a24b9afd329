import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import {
  assertMayCreateTask,
  assertMaySeeTask,
  assertMayStartFor,
  assignmentVisibility,
  WorkCaller,
} from './work-access.policy';

const caller = (scopes: string[], over: Partial<WorkCaller> = {}): WorkCaller => ({
  scopes,
  memberId: 5,
  isExternal: false,
  ...over,
});

describe('access to work', () => {
  it('shows admin-only tasks to holders of assignments:admin only (404 for everyone else)', () => {
    expect(() => assertMaySeeTask(caller(['assignments:admin']), { isAdmin: true })).not.toThrow();
    expect(() => assertMaySeeTask(caller(['assignments:write']), { isAdmin: true })).toThrow(NotFoundError);
    expect(() => assertMaySeeTask(caller(['assignments:read']), { isAdmin: false })).not.toThrow();
  });

  it('lets only assignments:admin create an admin-only task', () => {
    expect(() => assertMayCreateTask(caller(['assignments:write']), { isAdmin: true })).toThrow(
      /^isAdmin: an admin-only task requires the scope assignments:admin$/,
    );
    expect(() => assertMayCreateTask(caller(['assignments:admin']), { isAdmin: true })).not.toThrow();
    expect(() => assertMayCreateTask(caller(['assignments:write']), {})).not.toThrow();
  });

  it('shows External members and callers without assignments:read only their own assignments', () => {
    expect(assignmentVisibility(caller(['assignments:read']))).toEqual({ all: true });
    expect(assignmentVisibility(caller(['assignments:admin'], { isExternal: true }))).toEqual({
      all: false,
      memberId: 5,
    });
    expect(assignmentVisibility(caller([]))).toEqual({ all: false, memberId: 5 });
  });

  it('lets any member start a workflow for itself, and only assignments:write for others', () => {
    expect(() => assertMayStartFor(caller([]), 5)).not.toThrow();
    expect(() => assertMayStartFor(caller([], { isExternal: true }), 5)).not.toThrow();
    expect(() => assertMayStartFor(caller(['assignments:read']), 6)).toThrow(ForbiddenError);
    expect(() => assertMayStartFor(caller(['assignments:write']), 6)).not.toThrow();
  });

  it('bounds the self rule by a scoped credential’s own scopes (API keys, OAuth tokens)', () => {
    const app = caller([], { credentialScopes: ['workspace:read'] });
    expect(assignmentVisibility(app)).toEqual({ all: false, memberId: 0 });
    expect(() => assertMayStartFor(app, 5)).toThrow(
      new ForbiddenError('This credential lacks the scope assignments:write'),
    );
    const reading = caller([], { credentialScopes: ['assignments:read'] });
    expect(assignmentVisibility(reading)).toEqual({ all: false, memberId: 5 });
    expect(() => assertMayStartFor(reading, 5)).toThrow(ForbiddenError);
    expect(() => assertMayStartFor(caller([], { credentialScopes: ['assignments:write'] }), 5)).not.toThrow();
  });
});
