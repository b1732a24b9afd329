import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { EventSourcedRepository, staleVersion } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { WrongExpectedRevisionError } from '../../../core/event-store/event-store.port';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { ClaimKey, claimKeysOf } from '../domain/claim';
import { memberStream } from '../domain/identity.events';
import { memberDecider, MemberState, NewMember } from '../domain/member';
import type {
  ClaimEvent,
  MemberChanges,
  MemberEvent,
  MemberSnapshot,
  UniqueMemberField,
} from '../domain/member.events';
import { Assigner, checkRoleAssignment, RoleFacts } from '../domain/role-rules';
import { ClaimService } from './claims.service';
import { RoleLookup } from './role-lookup.service';

const MAX_ATTEMPTS = 4;

export type CreateOutcome =
  | { kind: 'created'; member: MemberSnapshot }
  /** A live member already holds one of the unique values. */
  | { kind: 'taken'; holder: number; field: UniqueMemberField }
  /** The new member's stream was fenced by a request that took over its claims; try again. */
  | { kind: 'fenced' };

export interface UpdateOptions {
  assigner: Assigner;
  /** Called with the new role before anything is written (authorisation: no escalation). */
  checkRole?: (role: RoleFacts) => void;
  /** Pinned by the client (If-Match): any other revision of the member stream is a 412. */
  expectedRevision?: bigint;
  /** The member as the caller just loaded it (`loaded`): the first attempt decides on it, no second read. */
  loaded?: LoadedMember;
}

/** What an update did: the member as it now stands, and whether this call appended anything. */
export interface UpdateOutcome {
  member: MemberSnapshot;
  appended: boolean;
}

/** A member's state with the stream revision it was read at. */
export interface LoadedMember {
  state: MemberState;
  revision: bigint | undefined;
}

const FIELD_LABEL: Record<UniqueMemberField, string> = {
  email: 'email',
  phone: 'phone',
  externalId: 'externalId',
};

export function takenError(field: UniqueMemberField): ConflictError {
  return new ConflictError(
    `${field}: another member of this workspace already has this ${FIELD_LABEL[field]}`,
  );
}

function minus(a: ClaimKey[], b: ClaimKey[]): ClaimKey[] {
  const streams = new Set(b.map((k) => k.stream));
  return a.filter((k) => !streams.has(k.stream));
}

/**
 * The member write path shared by signup, member updates, archive, import and /me:
 * load the member stream, decide, keep the uniqueness claims right around the append
 * (take the new values before, give the old ones up after).
 */
@Injectable()
export class MemberWriter {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly claims: ClaimService,
    private readonly roles: RoleLookup,
    private readonly db: DataSource,
  ) {}

  /** The member as it stands, with its role as merges have moved it; 404 outside the workspace. */
  async get(workspaceId: string, memberId: number): Promise<MemberSnapshot> {
    const { state } = await this.load(workspaceId, memberId);
    return state.member!;
  }

  /** The member and its stream revision, for a caller that checks it and then updates it. */
  loaded(workspaceId: string, memberId: number): Promise<LoadedMember> {
    return this.load(workspaceId, memberId);
  }

  /** `memberId`: one taken from member_id_seq beforehand (bulk import); else one is taken here. */
  async create(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    memberId?: number,
  ): Promise<CreateOutcome> {
    // Refuse a bad role before taking any claim.
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    memberId ??= await nextId(this.db, 'member_id_seq');
    const member: NewMember = { ...input, memberId };
    const keys = claimKeysOf(member);
    const taken: ClaimKey[] = [];
    try {
      for (const key of keys) {
        const r = await this.claims.acquire(key, memberId);
        if (!r.acquired) {
          await this.claims.releaseAll(taken, memberId);
          return { kind: 'taken', holder: r.holder, field: key.field };
        }
        taken.push(key);
      }
      // A fresh id's stream is empty unless a fence landed on it: 'no_stream' tells, no read needed.
      const state = memberDecider.initialState();
      const events = memberDecider.decide(
        { type: 'CreateMember', member, role, assigner, now: new Date().toISOString() },
        state,
      );
      await this.repo.append(memberStream(memberId), input.workspaceId, events, 'no_stream');
      return { kind: 'created', member: events.reduce(memberDecider.evolve, state).member! };
    } catch (err) {
      await this.claims.releaseAll(taken, memberId);
      if (err instanceof WrongExpectedRevisionError) return { kind: 'fenced' };
      throw err;
    }
  }

  /**
   * Creates many new members of one workspace together with their claims, in one atomic
   * write (bulk import). Undefined when the store cannot write streams atomically, or when
   * any value or id among them is already claimed: then nothing was written, and the
   * caller narrows the batch down or goes member by member through `create`.
   */
  get canCreateMany(): boolean {
    return this.repo.canCreateStreams;
  }

  async createMany(
    workspaceId: string,
    members: readonly { member: NewMember; role: RoleFacts }[],
    assigner: Assigner,
  ): Promise<MemberSnapshot[] | undefined> {
    if (!this.repo.canCreateStreams || members.length === 0) return undefined;
    const now = new Date().toISOString();
    const streams: { streamName: string; events: MemberEvent[] | ClaimEvent[] }[] = [];
    const created: MemberSnapshot[] = [];
    for (const { member, role } of members) {
      if (member.workspaceId !== workspaceId) throw new Error('createMany: members of one workspace only');
      checkRoleAssignment(member.kind, role, workspaceId, assigner);
      for (const key of claimKeysOf(member))
        streams.push({ streamName: key.stream, events: [this.claims.claimed(key, member.memberId)] });
      const state = memberDecider.initialState();
      const events = memberDecider.decide({ type: 'CreateMember', member, role, assigner, now }, state);
      streams.push({ streamName: memberStream(member.memberId), events });
      created.push(events.reduce(memberDecider.evolve, state).member!);
    }
    try {
      await this.repo.createStreams(workspaceId, streams);
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return undefined;
      throw err;
    }
    return created;
  }

  /**
   * Creates one new member with its claims and the given further new streams (its
   * account, its first token) in one atomic write. Undefined when the store cannot, or
   * when a value is already claimed or was claimed before (its claim stream exists):
   * then nothing was written, and the caller takes the step-by-step path.
   */
  async createWith(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    also: (member: MemberSnapshot) => { streamName: string; events: DomainEvent[] }[],
  ): Promise<MemberSnapshot | undefined> {
    if (!this.repo.canCreateStreams) return undefined;
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    const member: NewMember = { ...input, memberId: await nextId(this.db, 'member_id_seq') };
    const streams: { streamName: string; events: DomainEvent[] }[] = claimKeysOf(member).map((key) => ({
      streamName: key.stream,
      events: [this.claims.claimed(key, member.memberId)],
    }));
    const state = memberDecider.initialState();
    const events = memberDecider.decide(
      { type: 'CreateMember', member, role, assigner, now: new Date().toISOString() },
      state,
    );
    const created = events.reduce(memberDecider.evolve, state).member!;
    streams.push({ streamName: memberStream(member.memberId), events }, ...also(created));
    try {
      await this.repo.createStreams(input.workspaceId, streams);
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return undefined;
      throw err;
    }
    return created;
  }

  async update(
    workspaceId: string,
    memberId: number,
    changes: MemberChanges,
    options: UpdateOptions,
  ): Promise<MemberSnapshot> {
    return (await this.updateOutcome(workspaceId, memberId, changes, options)).member;
  }

  /**
   * Like `update`, and says whether this call appended events: a caller reporting per
   * change (import rows) must not infer it from timestamps, which a concurrent write to
   * the same member also moves.
   */
  async updateOutcome(
    workspaceId: string,
    memberId: number,
    changes: MemberChanges,
    options: UpdateOptions,
  ): Promise<UpdateOutcome> {
    const fresh = new Map<string, ClaimKey>();
    try {
      for (let attempt = 1; ; attempt++) {
        const { state, revision } =
          attempt === 1 && options.loaded ? options.loaded : await this.load(workspaceId, memberId);
        if (options.expectedRevision !== undefined && revision !== options.expectedRevision)
          throw staleVersion();
        const current = state.member!;
        let role: RoleFacts | undefined;
        if (changes.memberRoleId !== undefined && changes.memberRoleId !== current.memberRoleId) {
          role = await this.roles.facts(changes.memberRoleId);
          checkRoleAssignment(current.kind, role, workspaceId, options.assigner);
          options.checkRole?.(role);
        }
        const events = memberDecider.decide(
          {
            type: 'UpdateMember',
            memberId,
            workspaceId,
            changes,
            currentRoleId: current.memberRoleId,
            role,
            assigner: options.assigner,
            now: new Date().toISOString(),
          },
          state,
        );
        if (!events.length) return { member: current, appended: false };
        const next = events.reduce(memberDecider.evolve, state).member!;
        for (const key of minus(claimKeysOf(next), claimKeysOf(current))) {
          const r = await this.claims.acquire(key, memberId);
          if (!r.acquired) throw takenError(key.field);
          if (r.fresh) fresh.set(key.stream, key);
        }
        try {
          await this.repo.append(memberStream(memberId), workspaceId, events, revision!);
        } catch (err) {
          if (!(err instanceof WrongExpectedRevisionError)) throw err;
          if (options.expectedRevision !== undefined) throw staleVersion();
          if (attempt < MAX_ATTEMPTS) continue;
          throw err;
        }
        fresh.clear();
        await this.claims.releaseAll(minus(claimKeysOf(current), claimKeysOf(next)), memberId);
        return { member: next, appended: true };
      }
    } finally {
      // Values taken for a change that never landed go back.
      if (fresh.size) await this.claims.releaseAll([...fresh.values()], memberId);
    }
  }

  /** `expectedRevision`: pinned by the client (If-Match); any other revision is a 412. */
  async archive(workspaceId: string, memberId: number, expectedRevision?: bigint): Promise<MemberSnapshot> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(workspaceId, memberId);
      if (expectedRevision !== undefined && revision !== expectedRevision) throw staleVersion();
      const events = memberDecider.decide(
        {
          type: 'ArchiveMember',
          memberId,
          workspaceId,
          currentRoleId: state.member!.memberRoleId,
          now: new Date().toISOString(),
        },
        state,
      );
      if (!events.length) return state.member!;
      try {
        await this.repo.append(memberStream(memberId), workspaceId, events, revision!);
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (expectedRevision !== undefined) throw staleVersion();
        if (attempt < MAX_ATTEMPTS) continue;
        throw err;
      }
      const archived = events.reduce(memberDecider.evolve, state).member!;
      await this.claims.releaseAll(claimKeysOf(archived), memberId);
      return archived;
    }
  }

  /** Gives an account-less member (an imported contact) its login identity. */
  async linkAccount(workspaceId: string, memberId: number, accountUuid: string): Promise<MemberSnapshot> {
    return this.decideAndAppend(workspaceId, memberId, {
      type: 'LinkAccount',
      memberId,
      workspaceId,
      accountUuid,
      now: new Date().toISOString(),
    });
  }

  async revokeTokens(workspaceId: string, memberId: number): Promise<void> {
    await this.decideAndAppend(workspaceId, memberId, {
      type: 'RevokeMemberTokens',
      memberId,
      workspaceId,
      now: new Date().toISOString(),
    });
  }

  private async decideAndAppend(
    workspaceId: string,
    memberId: number,
    command: Parameters<typeof memberDecider.decide>[0],
  ): Promise<MemberSnapshot> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(workspaceId, memberId);
      const events = memberDecider.decide(command, state);
      if (!events.length) return state.member!;
      try {
        await this.repo.append(memberStream(memberId), workspaceId, events, revision!);
        return events.reduce(memberDecider.evolve, state).member!;
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  /** Loads the member; its role is replaced by where merges moved it, since merges live in role streams. */
  private async load(workspaceId: string, memberId: number): Promise<LoadedMember> {
    const { state, revision } = await this.repo.load(memberStream(memberId), memberDecider);
    if (!state.member || state.member.workspaceId !== workspaceId)
      throw new NotFoundError('Member not found');
    const role = await this.roles.effective(state.member.memberRoleId);
    const member =
      role.roleId === state.member.memberRoleId
        ? state.member
        : { ...state.member, memberRoleId: role.roleId };
    return { state: { ...state, member }, revision };
  }
}
