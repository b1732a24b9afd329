import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import {
  assertScopeOrSelf,
  assertSelfChangeAllowed,
  authoriseMemberChange,
  memberVisibility,
} from './member-access.policy';

describe('member access policy', () => {
  const reader = { scopes: ['members:read'], memberId: 7 };
  const writer = { scopes: ['members:write'], memberId: 7 };
  const admin = { scopes: ['members:admin'], memberId: 7 };
  const nobody = { scopes: [] as string[], memberId: 7 };

  it('assertScopeOrSelf: the scope, or the caller’s own member; else 403 naming the scope', () => {
    expect(() => assertScopeOrSelf(reader, 'members:read', 9)).not.toThrow();
    expect(() => assertScopeOrSelf(nobody, 'members:read', 7)).not.toThrow();
    expect(() => assertScopeOrSelf(nobody, 'members:read', 9)).toThrow(
      new ForbiddenError('This credential lacks the scope members:read'),
    );
    expect(() => assertScopeOrSelf({ scopes: [], memberId: undefined }, 'members:write', 9)).toThrow(
      ForbiddenError,
    );
  });

  it('authoriseMemberChange: members:write may change anyone visible; self-access only itself', () => {
    expect(authoriseMemberChange(writer, 9, { anonymous: false })).toEqual({ canWrite: true });
    expect(authoriseMemberChange(nobody, 7, { anonymous: true })).toEqual({ canWrite: false });
    expect(() => authoriseMemberChange(reader, 9, { anonymous: false })).toThrow(
      new ForbiddenError('This credential lacks the scope members:write'),
    );
  });

  it('bounds the self rule by a scoped credential’s own scopes (API keys, OAuth tokens)', () => {
    const app = { scopes: [] as string[], memberId: 7, credentialScopes: ['workspace:read'] };
    expect(() => assertScopeOrSelf(app, 'members:read', 7)).toThrow(
      new ForbiddenError('This credential lacks the scope members:read'),
    );
    expect(() => authoriseMemberChange(app, 7, { anonymous: false })).toThrow(
      new ForbiddenError('This credential lacks the scope members:write'),
    );
    const reading = { ...app, credentialScopes: ['members:read'] };
    expect(() => assertScopeOrSelf(reading, 'members:read', 7)).not.toThrow();
    expect(() => authoriseMemberChange(reading, 7, { anonymous: false })).toThrow(ForbiddenError);
    const writing = { ...app, credentialScopes: ['members:write'] };
    expect(authoriseMemberChange(writing, 7, { anonymous: true })).toEqual({ canWrite: false });
    expect(() => authoriseMemberChange(writing, 9, { anonymous: false })).toThrow(ForbiddenError);
  });

  it('authoriseMemberChange: an anonymous member is a 404 to all but members:admin and itself', () => {
    expect(() => authoriseMemberChange(writer, 9, { anonymous: true })).toThrow(
      new NotFoundError('Member not found'),
    );
    expect(authoriseMemberChange(admin, 9, { anonymous: true })).toEqual({ canWrite: true });
  });

  it('assertSelfChangeAllowed: self-access cannot change its role or external id; members:write can', () => {
    const current = { memberRoleId: 3, externalId: 'x-1' };
    expect(() =>
      assertSelfChangeAllowed(false, { memberRoleId: 3, externalId: 'x-1' }, current),
    ).not.toThrow();
    expect(() => assertSelfChangeAllowed(false, {}, current)).not.toThrow();
    expect(() => assertSelfChangeAllowed(false, { memberRoleId: 4 }, current)).toThrow(
      new ForbiddenError('memberRoleId: changing it requires the scope members:write'),
    );
    expect(() => assertSelfChangeAllowed(false, { externalId: null }, current)).toThrow(
      new ForbiddenError('externalId: changing it requires the scope members:write'),
    );
    expect(() => assertSelfChangeAllowed(true, { memberRoleId: 4, externalId: null }, current)).not.toThrow();
  });

  it("assertSelfChangeAllowed: an agent's model and instructions are for members:write only", () => {
    const agent = { memberRoleId: 3, externalId: null, agentModel: 'm-1' };
    expect(() =>
      assertSelfChangeAllowed(false, { agentModel: 'm-1', agentInstructions: null }, agent),
    ).not.toThrow();
    expect(() => assertSelfChangeAllowed(false, { agentModel: 'm-2' }, agent)).toThrow(
      new ForbiddenError('agentModel: changing it requires the scope members:write'),
    );
    expect(() => assertSelfChangeAllowed(false, { agentInstructions: 'Obey me' }, agent)).toThrow(
      new ForbiddenError('agentInstructions: changing it requires the scope members:write'),
    );
    expect(() => assertSelfChangeAllowed(true, { agentInstructions: 'Be kind' }, agent)).not.toThrow();
  });

  it('memberVisibility: anonymous members with members:admin only; always itself', () => {
    expect(memberVisibility(admin)).toEqual({ anonymous: true, selfId: 7 });
    expect(memberVisibility(writer)).toEqual({ anonymous: false, selfId: 7 });
    expect(memberVisibility({ scopes: [], memberId: undefined })).toEqual({
      anonymous: false,
      selfId: undefined,
    });
  });
});
