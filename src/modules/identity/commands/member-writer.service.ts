import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Claims, CLAIMS, ClaimTakenError } from '../../../core/claims/claims';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { CachedLoader, EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { nextId } from '../../../core/database/ids';
import { AppendResult, WrongExpectedRevisionError } from '../../../core/event-store/event-store.port';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { memberStream } from '../domain/identity.events';
import { MemberCommand, memberDecider, MemberState, NewMember } from '../domain/member';
import { fieldOfKind, memberClaimPlan, MEMBER_CLAIM_KINDS, memberIdOf } from '../domain/member-claims';
import type { MemberChanges, MemberEvent, MemberSnapshot, UniqueMemberField } from '../domain/member.events';
import { Assigner, checkRoleAssignment, memberRoleStream, RoleFacts } from '../../roles';
import { RoleLookup } from './role-lookup.service';

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
  /** When this call appended: the member stream's revision after its events (the member's `revision`). */
  revision?: bigint;
}

/** A member's state with the stream revision it was read at (`cached`: from the process's cache). */
export interface LoadedMember {
  state: MemberState;
  revision: bigint | undefined;
  cached?: boolean;
}

/** Thrown inside an update that skipped the role gate when the role proves to change after all. */
class RoleChangeUngated extends Error {}

/** Member snapshots whose role MemberWriter.effective has already followed through merges. */
const resolved = new WeakSet<MemberSnapshot>();

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

/** The 409 of a value another member holds, from the claim that refused it. */
function takenBy(err: ClaimTakenError): ConflictError {
  return takenError(fieldOfKind(err.kind));
}

/**
 * The member write path shared by signup, member updates, archive, import, invitations
 * and /me: the member's decisions with the uniqueness claims of email, phone and
 * externalId (domain/member-claims.ts) taken and given up with the append itself
 * (core/claims). Loading, deciding, appending and retrying a lost race is
 * EventSourcedRepository.handle's; this class only supplies the member's facts.
 */
@Injectable()
export class MemberWriter {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(CLAIMS) private readonly claims: Claims,
    private readonly roles: RoleLookup,
    private readonly db: DataSource,
    private readonly gate: ReferenceGate,
  ) {}

  /**
   * A new member's role as its stream stands once in the gate. Built-in roles are never
   * deleted nor merged away: they need no gate, and their facts do not change kind. A
   * `defaulted` role (the workspace default, not named by the caller) that is gone by
   * then gives way to the built-in User role, as a default found gone does before.
   */
  private async createRole<T>(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    defaulted: boolean,
    write: (input: Omit<NewMember, 'memberId'>, role: RoleFacts) => Promise<T>,
  ): Promise<T> {
    if (role.builtIn !== null) return write(input, role);
    return this.withRoles([role.roleId], async (fresh) => {
      let now = fresh.get(role.roleId)!;
      if (defaulted && (!now.exists || now.deleted || now.workspaceId !== input.workspaceId))
        now = await this.roles.builtIn(input.workspaceId, 'user');
      return write({ ...input, memberRoleId: now.roleId }, now);
    });
  }

  /**
   * Runs a write giving members roles `roleIds` inside core's ReferenceGate, so that it
   * cannot cross a deletion or merge of one of them (which decides from the read models
   * who holds it): `write` gets each role's facts read from its stream after entering.
   */
  private withRoles<T>(
    roleIds: readonly number[],
    write: (fresh: Map<number, RoleFacts>) => Promise<T>,
    read = true,
  ): Promise<T> {
    const ids = [...new Set(roleIds)];
    return this.gate.referring(
      ids.map(memberRoleStream),
      async () => {
        const fresh = new Map<number, RoleFacts>();
        if (read) await Promise.all(ids.map(async (id) => fresh.set(id, await this.roles.facts(id))));
        return write(fresh);
      },
      (target) =>
        new ConflictError(`memberRoleId: ${target.replace('memberrole-', 'role ')} is being deleted; retry`),
    );
  }

  /** The member as it stands, with its role as merges have moved it; 404 outside the workspace. */
  async get(workspaceId: string, memberId: number): Promise<MemberSnapshot> {
    const { state } = await this.load(workspaceId, memberId);
    return state.member!;
  }

  /**
   * The member and its stream revision, for a caller that checks it and then updates it;
   * through `loader` (in `cachedFirst`), from the process's cache where it is held.
   */
  loaded(workspaceId: string, memberId: number, loader?: CachedLoader): Promise<LoadedMember> {
    return this.load(workspaceId, memberId, loader);
  }

  /**
   * Runs a load-check-update command first on the member as this process last read or
   * wrote it, and again from the store should that state prove stale (the append's
   * revision check) or anything fail on it (EventSourcedRepository.cachedFirst): a
   * member `PUT` then reads no stream at all.
   */
  cachedFirst<T>(command: (loader: CachedLoader) => Promise<T>): Promise<T> {
    return this.repo.cachedFirst(command);
  }

  /** The live member holding a value of `field`, if any (waiting out a claim still in flight). */
  async holderOf(workspaceId: string, field: UniqueMemberField, value: string): Promise<number | undefined> {
    const owner = await this.claims.ownerOf(workspaceId, MEMBER_CLAIM_KINDS[field], value);
    return owner === undefined ? undefined : memberIdOf(owner);
  }

  /** `memberId`: one taken from member_id_seq beforehand (bulk import); else one is taken here. */
  async create(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    memberId?: number,
    defaulted = false,
  ): Promise<CreateOutcome> {
    // Refuse a bad role before taking any claim, and again as its stream stands once in the gate.
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    return this.createRole(input, role, defaulted, (i, r) => this.createNow(i, r, assigner, memberId));
  }

  private async createNow(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    memberId?: number,
  ): Promise<CreateOutcome> {
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    memberId ??= await nextId(this.db, 'member_id_seq');
    const { events, created } = this.decideCreate({ ...input, memberId }, role, assigner);
    try {
      // A fresh id's stream is empty unless a takeover fenced it: 'no_stream' tells, no read needed.
      const result = await this.repo.appendClaimed(
        memberStream(memberId),
        input.workspaceId,
        events,
        'no_stream',
        memberClaimPlan(null, created),
      );
      this.remember(events, result);
      return { kind: 'created', member: created };
    } catch (err) {
      if (err instanceof ClaimTakenError)
        return { kind: 'taken', holder: memberIdOf(err.owner), field: fieldOfKind(err.kind) };
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
    return this.repo.canAppendClaimedMany;
  }

  async createMany(
    workspaceId: string,
    members: readonly { member: NewMember; role: RoleFacts }[],
    assigner: Assigner,
  ): Promise<MemberSnapshot[] | undefined> {
    if (!this.repo.canAppendClaimedMany || members.length === 0) return undefined;
    return this.withRoles(
      members.filter((m) => m.role.builtIn === null).map((m) => m.role.roleId),
      (fresh) =>
        this.createManyNow(
          workspaceId,
          members.map(({ member, role }) => ({ member, role: fresh.get(role.roleId) ?? role })),
          assigner,
        ),
    );
  }

  private async createManyNow(
    workspaceId: string,
    members: readonly { member: NewMember; role: RoleFacts }[],
    assigner: Assigner,
  ): Promise<MemberSnapshot[] | undefined> {
    const decided = members.map(({ member, role }) => {
      if (member.workspaceId !== workspaceId) throw new Error('createMany: members of one workspace only');
      return this.decideCreate(member, role, assigner);
    });
    const written = await this.appendMany(
      workspaceId,
      decided.map(({ events, created }) => ({
        streamName: memberStream(created.id),
        events,
        plan: memberClaimPlan(null, created),
      })),
    );
    if (!written) return undefined;
    decided.forEach((d, i) => this.remember(d.events, written[i]));
    return decided.map((d) => d.created);
  }

  /**
   * Creates one new member with its claims and the given further new streams (its
   * account, its first token) in one atomic write. Undefined when the store cannot (then
   * nothing was tried); `taken` or `fenced`, with nothing written, when a value is
   * already claimed or a stream exists: the caller then looks the member up, or goes
   * step by step.
   */
  async createWith(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    also: (member: MemberSnapshot) => { streamName: string; events: DomainEvent[] }[],
    defaulted = false,
  ): Promise<CreateOutcome | undefined> {
    if (!this.repo.canAppendClaimedMany) return undefined;
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    return this.createRole(input, role, defaulted, (i, r) => this.createWithNow(i, r, assigner, also));
  }

  private async createWithNow(
    input: Omit<NewMember, 'memberId'>,
    role: RoleFacts,
    assigner: Assigner,
    also: (member: MemberSnapshot) => { streamName: string; events: DomainEvent[] }[],
  ): Promise<CreateOutcome> {
    checkRoleAssignment(input.kind, role, input.workspaceId, assigner);
    const member: NewMember = { ...input, memberId: await nextId(this.db, 'member_id_seq') };
    const { events, created } = this.decideCreate(member, role, assigner);
    try {
      const written = await this.repo.appendClaimedMany(input.workspaceId, [
        {
          streamName: memberStream(member.memberId),
          events,
          expectedRevision: 'no_stream',
          plan: memberClaimPlan(null, created),
        },
        ...also(created).map((s) => ({ ...s, expectedRevision: 'no_stream' as const })),
      ]);
      this.remember(events, written[0]);
      return { kind: 'created', member: created };
    } catch (err) {
      if (err instanceof ClaimTakenError)
        return { kind: 'taken', holder: memberIdOf(err.owner), field: fieldOfKind(err.kind) };
      if (err instanceof WrongExpectedRevisionError) return { kind: 'fenced' };
      throw err;
    }
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
    const roleId = changes.memberRoleId;
    const gated = () =>
      // The update reads the role from its stream itself, after entering.
      this.withRoles([roleId!], () => this.updateNow(workspaceId, memberId, changes, options, true), false);
    // A role change goes through the gate; a write keeping the role (as the caller loaded it) does not.
    if (roleId !== undefined && options.loaded?.state.member?.memberRoleId !== roleId) return gated();
    try {
      return await this.updateNow(workspaceId, memberId, changes, options, false);
    } catch (err) {
      if (err instanceof RoleChangeUngated) return gated();
      throw err;
    }
  }

  private async updateNow(
    workspaceId: string,
    memberId: number,
    changes: MemberChanges,
    options: UpdateOptions,
    inGate: boolean,
  ): Promise<UpdateOutcome> {
    let current: MemberSnapshot | undefined;
    const { state, events, append } = await this.handle(workspaceId, memberId, {
      expectedRevision: options.expectedRevision,
      loaded: options.loaded,
      command: async (member) => {
        current = member;
        let role: RoleFacts | undefined;
        if (changes.memberRoleId !== undefined && changes.memberRoleId !== member.memberRoleId) {
          if (!inGate) throw new RoleChangeUngated();
          role = await this.roles.facts(changes.memberRoleId);
          checkRoleAssignment(member.kind, role, workspaceId, options.assigner);
          options.checkRole?.(role);
        }
        return {
          type: 'UpdateMember',
          memberId,
          workspaceId,
          changes,
          currentRoleId: member.memberRoleId,
          role,
          assigner: options.assigner,
          now: new Date().toISOString(),
        };
      },
    });
    return events.length
      ? { member: state.member!, appended: true, revision: append?.nextExpectedRevision }
      : { member: current!, appended: false };
  }

  /** `expectedRevision`: pinned by the client (If-Match); any other revision is a 412. */
  async archive(workspaceId: string, memberId: number, expectedRevision?: bigint): Promise<MemberSnapshot> {
    let current: MemberSnapshot | undefined;
    const { state, events } = await this.handle(workspaceId, memberId, {
      expectedRevision,
      command: (member) => {
        current = member;
        return {
          type: 'ArchiveMember',
          memberId,
          workspaceId,
          currentRoleId: member.memberRoleId,
          now: new Date().toISOString(),
        };
      },
    });
    return events.length ? state.member! : current!;
  }

  /** Gives an account-less member (an imported contact) its login identity. */
  async linkAccount(workspaceId: string, memberId: number, accountUuid: string): Promise<MemberSnapshot> {
    let current: MemberSnapshot | undefined;
    const { state, events } = await this.handle(workspaceId, memberId, {
      command: (member) => {
        current = member;
        return { type: 'LinkAccount', memberId, workspaceId, accountUuid, now: new Date().toISOString() };
      },
    });
    return events.length ? state.member! : current!;
  }

  /** Records an SMS keyword's effect (opt out or back in); returns the events appended. */
  async recordSmsConsent(
    workspaceId: string,
    memberId: number,
    consent: 'opted_out' | 'opted_in',
    keyword: string,
  ): Promise<MemberEvent[]> {
    const { events } = await this.handle(workspaceId, memberId, {
      command: (member) => ({
        type: 'RecordSmsConsent',
        memberId,
        workspaceId,
        consent,
        keyword,
        currentRoleId: member.memberRoleId,
        now: new Date().toISOString(),
      }),
    });
    return events;
  }

  async revokeTokens(workspaceId: string, memberId: number): Promise<void> {
    await this.handle(workspaceId, memberId, {
      command: () => ({ type: 'RevokeMemberTokens', memberId, workspaceId, now: new Date().toISOString() }),
    });
  }

  /**
   * One member command through EventSourcedRepository.handle, with the claims its events
   * take and give up. `command` is made on each attempt from the member as it then
   * stands (its role as merges moved it); a value held by another member is the 409.
   */
  private async handle(
    workspaceId: string,
    memberId: number,
    options: {
      command: (member: MemberSnapshot) => MemberCommand | Promise<MemberCommand>;
      expectedRevision?: bigint;
      loaded?: LoadedMember;
    },
  ): Promise<{ state: MemberState; events: MemberEvent[]; append?: AppendResult }> {
    try {
      return await this.repo.handle({
        streamName: memberStream(memberId),
        workspaceId,
        decider: memberDecider,
        expectedRevision: options.expectedRevision,
        loaded: options.loaded,
        command: {
          from: async (state: MemberState) => options.command(await this.effective(workspaceId, state)),
        },
        claims: (events, state) =>
          memberClaimPlan(state.member, events.reduce(memberDecider.evolve, state).member),
      });
    } catch (err) {
      if (err instanceof ClaimTakenError) throw takenBy(err);
      throw err;
    }
  }

  private decideCreate(
    member: NewMember,
    role: RoleFacts,
    assigner: Assigner,
  ): { events: MemberEvent[]; created: MemberSnapshot } {
    const state = memberDecider.initialState();
    const events = memberDecider.decide(
      { type: 'CreateMember', member, role, assigner, now: new Date().toISOString() },
      state,
    );
    return { events, created: events.reduce(memberDecider.evolve, state).member! };
  }

  /** A new member's stream as just written, kept for `cachedFirst` (its next update reads nothing). */
  private remember(events: MemberEvent[], result: AppendResult): void {
    const state = events.reduce(memberDecider.evolve, memberDecider.initialState());
    if (state.member)
      this.repo.remember(memberStream(state.member.id), memberDecider, state, result.nextExpectedRevision);
  }

  /**
   * New streams (with their claims) in one atomic write, with each one's result;
   * undefined, with nothing written, when any is taken.
   */
  private async appendMany(
    workspaceId: string,
    streams: {
      streamName: string;
      events: readonly DomainEvent[];
      plan?: ReturnType<typeof memberClaimPlan>;
    }[],
  ): Promise<AppendResult[] | undefined> {
    try {
      return await this.repo.appendClaimedMany(
        workspaceId,
        streams.map((s) => ({ ...s, expectedRevision: 'no_stream' as const })),
      );
    } catch (err) {
      if (err instanceof ClaimTakenError || err instanceof WrongExpectedRevisionError) return undefined;
      throw err;
    }
  }

  /** Loads the member; its role is replaced by where merges moved it, since merges live in role streams. */
  private async load(workspaceId: string, memberId: number, loader?: CachedLoader): Promise<LoadedMember> {
    const { state, revision, cached } = loader
      ? await loader.load(memberStream(memberId), memberDecider)
      : { ...(await this.repo.load(memberStream(memberId), memberDecider)), cached: false };
    return { state: { ...state, member: await this.effective(workspaceId, state) }, revision, cached };
  }

  /**
   * The member with its effective role; 404 when absent or of another workspace. A
   * snapshot this method returned is returned as it is: a command deciding on the member
   * its caller just loaded (`loaded`) does not read the role streams a second time.
   */
  private async effective(workspaceId: string, state: MemberState): Promise<MemberSnapshot> {
    if (!state.member || state.member.workspaceId !== workspaceId)
      throw new NotFoundError('Member not found');
    if (resolved.has(state.member)) return state.member;
    const role = await this.roles.effective(state.member.memberRoleId);
    const member =
      role.roleId === state.member.memberRoleId
        ? state.member
        : { ...state.member, memberRoleId: role.roleId };
    resolved.add(member);
    return member;
  }
}
