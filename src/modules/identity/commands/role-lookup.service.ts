import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { AuthCache } from '../../../core/auth/auth-cache';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { DomainEvent } from '../../../core/cqrs/decider';
import {
  assertMayTakeAway,
  BuiltInRoleKey,
  GetBuiltInRoleIdQuery,
  memberRoleStream,
  RoleFacts,
} from '../../roles';
import { GetWorkspaceDefaultRoleQuery } from '../../workspaces';
import type { MemberKind } from '../domain/identity.events';

const MAX_MERGE_HOPS = 8;

/**
 * Folds a role stream into the facts member decisions need. The roles feature owns
 * the stream and adds event types over time, so unknown types are skipped and the
 * ones read here are read defensively.
 */
function evolveRole(state: RoleFacts, event: DomainEvent): RoleFacts {
  const d = (event.data ?? {}) as Record<string, unknown>;
  switch (event.type) {
    case 'MemberRoleCreated':
      return {
        ...state,
        exists: true,
        workspaceId: String(d.workspaceId),
        name: String(d.name),
        permissions: Array.isArray(d.permissions) ? (d.permissions as string[]) : [],
        builtIn: (d.builtIn as BuiltInRoleKey | null) ?? null,
      };
    case 'MemberRoleUpdated':
      return {
        ...state,
        name: typeof d.name === 'string' ? d.name : state.name,
        permissions: Array.isArray(d.permissions) ? (d.permissions as string[]) : state.permissions,
      };
    case 'MemberRoleDeleted':
      return { ...state, deleted: true };
    case 'MemberRolesMerged':
      return {
        ...state,
        deleted: true,
        mergedInto: typeof d.targetRoleId === 'number' ? d.targetRoleId : null,
      };
    default:
      return state;
  }
}

/** A role of this workspace, live, that a person may be given without support staff. */
function usableForPerson(role: RoleFacts, workspaceId: string): boolean {
  return (
    role.exists &&
    !role.deleted &&
    role.workspaceId === workspaceId &&
    role.builtIn !== 'agent' &&
    role.builtIn !== 'platform_support'
  );
}

/** Role facts for the command path, read from the role streams (never from a read model to decide). */
@Injectable()
export class RoleLookup {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
    private readonly cache: AuthCache,
  ) {}

  /**
   * Moving a member off `currentRoleId` takes that role's scopes away: the caller must hold
   * them all (roles' no-escalation rule, the other direction), else 403. The role is
   * followed through merges read from the store, never the cached `effective` answer: a
   * member loaded before a merge was projected still names the merged role, whose scopes
   * are not the ones it holds now (a members:write key demoted a member merged onto Manager).
   */
  async assertMayMoveOff(
    callerScopes: readonly string[],
    currentRoleId: number,
    field: string,
  ): Promise<void> {
    const now = await this.follow(currentRoleId);
    assertMayTakeAway(callerScopes, now.permissions, field, `the member's current role, ${now.name},`);
  }

  /**
   * An agent's instructions and model steer what the assistant does as that agent, with
   * its role's scopes (its tools): changing them needs every scope that role grants, as
   * moving the agent off it does, else 403 naming `field`.
   */
  async assertMaySteer(callerScopes: readonly string[], agentRoleId: number, field: string): Promise<void> {
    const now = await this.follow(agentRoleId);
    assertMayTakeAway(callerScopes, now.permissions, field, `the agent's role, ${now.name},`);
  }

  /** assertMaySteer when `changes` change an agent's instructions or model (a value equal to the current one does not). */
  async assertMaySteerAgent(
    callerScopes: readonly string[],
    member: {
      kind: string;
      memberRoleId: number;
      agentModel?: string | null;
      agentInstructions?: string | null;
    },
    changes: { agentModel?: string | null; agentInstructions?: string | null },
  ): Promise<void> {
    if (member.kind !== 'agent') return;
    for (const field of ['agentInstructions', 'agentModel'] as const)
      if (changes[field] !== undefined && changes[field] !== (member[field] ?? null))
        return this.assertMaySteer(callerScopes, member.memberRoleId, field);
  }

  async facts(roleId: number): Promise<RoleFacts> {
    const initial: RoleFacts = {
      roleId,
      exists: false,
      workspaceId: null,
      name: '',
      permissions: [],
      builtIn: null,
      deleted: false,
      mergedInto: null,
    };
    const { state } = await this.repo.load<RoleFacts, DomainEvent>(memberRoleStream(roleId), {
      initialState: () => initial,
      evolve: evolveRole,
    });
    return state;
  }

  /**
   * The role a holder of `roleId` holds now: merges move members without touching member
   * streams. Every member load asks it (a member `PUT` would read its role's stream each
   * time), so an existing role's answer is kept in core's AuthCache: emptied, in every
   * process, once a batch holding a role's merge, deletion or change of scopes is
   * projected (identity-resolvers.ts names them), and after AUTH_CACHE_TTL_MS at most.
   * Until then a member decided on may carry the role it held before a merge: the members
   * projection writes only changed columns, so a merge's move is not undone, and the next
   * load follows the merge (the same window as a merge racing a write between its reads).
   * `facts` of a role to assign or to take away (the escalation checks) is never cached.
   */
  async effective(roleId: number): Promise<RoleFacts> {
    let found: RoleFacts | undefined;
    const cached = await this.cache.get(`role-effective:${roleId}`, async () => {
      found = await this.follow(roleId);
      // Only a role that exists: one created after a miss must be seen at once.
      return found.exists ? found : undefined;
    });
    return cached ?? found ?? this.follow(roleId);
  }

  private async follow(roleId: number): Promise<RoleFacts> {
    let facts = await this.facts(roleId);
    for (let hop = 0; hop < MAX_MERGE_HOPS && facts.mergedInto !== null; hop++)
      facts = await this.facts(facts.mergedInto);
    return facts;
  }

  /** A built-in role of a workspace (its id from roles' public query, its facts from its stream). */
  async builtIn(workspaceId: string, key: BuiltInRoleKey): Promise<RoleFacts> {
    const id = await this.queries.execute<GetBuiltInRoleIdQuery, number | undefined>(
      new GetBuiltInRoleIdQuery(workspaceId, key),
    );
    if (id === undefined) throw new Error(`Workspace ${workspaceId} has no built-in ${key} role`);
    return this.facts(id);
  }

  /**
   * The role a new member gets when none is named: agents the Agent role; persons the
   * workspace default when it is usable for a person, else the built-in User role. A
   * default that a merge deleted follows the merge; one a person may not hold (Agent,
   * Platform Support) or that is gone falls back to User rather than failing signups
   * over a workspace setting the caller cannot fix.
   */
  async defaultFor(workspaceId: string, kind: MemberKind): Promise<RoleFacts> {
    if (kind === 'agent') return this.builtIn(workspaceId, 'agent');
    const id = await this.queries.execute<GetWorkspaceDefaultRoleQuery, number | null>(
      new GetWorkspaceDefaultRoleQuery(workspaceId, 'stream'),
    );
    if (id) {
      const role = await this.effective(id);
      if (usableForPerson(role, workspaceId)) return role;
    }
    return this.builtIn(workspaceId, 'user');
  }

  /**
   * The role a person who wrote to one of the workspace's numbers gets: the number's
   * `signupRoleId` when set, read from the role's stream (a role merged since counts as its
   * target, where its holders went); the built-in External role when none is set or the
   * role is gone (deleted since) or no longer one a person may hold.
   */
  async contactRole(workspaceId: string, signupRoleId: number | null): Promise<RoleFacts> {
    if (signupRoleId !== null) {
      const role = await this.follow(signupRoleId);
      if (usableForPerson(role, workspaceId)) return role;
    }
    return this.builtIn(workspaceId, 'external');
  }
}
