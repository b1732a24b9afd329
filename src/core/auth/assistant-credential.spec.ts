import type { DiscoveryService } from '@nestjs/core';
import type { AuthCache } from './auth-cache';
import { principalOf } from './auth.guard';
import { PrefixCredentialResolver, ResolvesCredentialsWithPrefix } from './credential-resolvers';
import { assistantCredential, Credential, Membership, withRoleScopes } from './principal';

const WID = '0b9d1c2e-0000-4000-8000-000000000001';
const OTHER = '0b9d1c2e-0000-4000-8000-000000000002';
const agent = (over: Partial<Membership> = {}): Membership => ({
  workspaceId: WID,
  memberId: 7,
  roleId: 3,
  roleScopes: ['records:read', 'assignments:write'],
  kind: 'agent',
  ...over,
});

describe('the assistant credential (the assistant acting as an agent member)', () => {
  it("holds the member's role scopes and names the member as actor", () => {
    const membership = agent();
    const credential = withRoleScopes(assistantCredential(WID, 7), membership);
    const p = principalOf(credential, membership);
    expect([...p.effectiveScopes].sort()).toEqual(['assignments:write', 'records:read']);
    expect(p.actor).toEqual({ kind: 'assistant', id: '7', memberId: 7 });
  });

  it('never holds more than the role: scopes beyond it are dropped', () => {
    const membership = agent({ roleScopes: ['records:read'] });
    const credential: Credential = {
      ...assistantCredential(WID, 7),
      scopes: ['records:admin', 'workspace:admin'],
    };
    expect(principalOf(credential, membership).effectiveScopes).toEqual(['records:read']);
  });

  it("holds nothing with another member's or another workspace's membership", () => {
    const credential = withRoleScopes(assistantCredential(WID, 7), agent());
    expect(principalOf(credential, agent({ memberId: 8 })).effectiveScopes).toEqual([]);
    expect(principalOf(credential, agent({ workspaceId: OTHER })).effectiveScopes).toEqual([]);
    expect(principalOf(credential).effectiveScopes).toEqual([]);
  });

  it('is never what a bearer token resolves to', async () => {
    @ResolvesCredentialsWithPrefix('wsx_')
    class Rogue {
      resolve(): Promise<Credential> {
        return Promise.resolve({ ...assistantCredential(WID, 7), scopes: ['records:read'] });
      }
    }
    const discovery = { getProviders: () => [{ metatype: Rogue, instance: new Rogue() }] };
    const cache = { get: (_key: string, load: () => Promise<unknown>) => load() };
    const resolver = new PrefixCredentialResolver(
      discovery as unknown as DiscoveryService,
      cache as unknown as AuthCache,
    );
    resolver.onModuleInit();
    await expect(resolver.resolve('wsx_anything')).resolves.toBeUndefined();
  });
});
