import { CommandBus, CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { ConflictError, ValidationError } from '../../../core/http/domain-errors';
import { normalizeEmail, normalizeExternalId, normalizeName, normalizePhone } from '../domain/contact';
import type { MemberSnapshot, UniqueMemberField } from '../domain/member.events';
import { CheckSignupDataQuery, UpsertSignupRecordsCommand } from '../../records';
import { assertMaySignIn } from '../domain/member-access.policy';
import type { Caller } from './member-input';
import { AccountService, AccountView } from './accounts.service';
import { MemberTokenService } from './member-tokens.service';
import { MemberWriter } from './member-writer.service';
import { RoleLookup } from './role-lookup.service';

export interface SignupInput {
  member: { email?: string; phone?: string; name?: string; externalId?: string };
  data?: Record<string, unknown>;
}

export interface SignupResult {
  token: string;
  account: AccountView;
  member: { id: number; email: string | null; memberRoleId: number };
  wasCreated: boolean;
}

export class CreateSignupCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: SignupInput,
    /** Who signs the member up: its scopes decide whether `data` may write records (records:write). */
    readonly caller: Caller = { scopes: [], memberId: undefined },
  ) {}
}

interface Normalised {
  email: string | null;
  phone: string | null;
  name: string | null;
  externalId: string | null;
}

const MAX_ATTEMPTS = 5;
/** The spec's lookup order for an existing member. */
const LOOKUP_ORDER: UniqueMemberField[] = ['externalId', 'email', 'phone'];

export function normaliseSignup(input: SignupInput): Normalised {
  const m = input.member;
  const out: Normalised = {
    email: m.email !== undefined ? normalizeEmail(m.email, 'member.email') : null,
    phone: m.phone !== undefined ? normalizePhone(m.phone, 'member.phone') : null,
    name: m.name !== undefined ? normalizeName(m.name, 'member.name') : null,
    externalId: m.externalId !== undefined ? normalizeExternalId(m.externalId, 'member.externalId') : null,
  };
  if (!out.email && !out.phone) throw new ValidationError('member: one of email or phone is required');
  return out;
}

/**
 * POST /w/{wid}/create-signup: finds the member by externalId, then email, then phone,
 * or creates it (with an account) under the workspace's default role; either way
 * answers with a fresh member token. Racing signups for one person converge on one
 * member through the uniqueness claims: the losers find the winner.
 */
@CommandHandler(CreateSignupCommand)
export class CreateSignupHandler implements ICommandHandler<CreateSignupCommand, SignupResult> {
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
    private readonly accounts: AccountService,
    private readonly tokens: MemberTokenService,
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /**
   * The `data` part (data type slug → {externalId, values}) is the records feature's: it
   * is checked before anything is written (an unknown slug or a bad value is a 400 and
   * creates nothing), then the member's records are upserted once the member is known.
   */
  async execute({ workspaceId, input, caller }: CreateSignupCommand): Promise<SignupResult> {
    const who = normaliseSignup(input);
    const data = input.data && Object.keys(input.data).length ? input.data : undefined;
    // Checked against the member the signup will find (or none: a new one), as the write will meet it.
    let found: number | null | undefined;
    if (data) {
      found = (await this.find(workspaceId, who)) ?? null;
      const check = (memberId: number | null) =>
        this.queries.execute(new CheckSignupDataQuery(workspaceId, data, caller, memberId));
      try {
        await check(found);
      } catch (err) {
        // A concurrent signup of this very person may have created them, and their records,
        // since the lookup: a record "of another member" is then theirs. Look again once.
        if (!(err instanceof ConflictError) || found !== null) throw err;
        const again = await this.find(workspaceId, who);
        if (again === undefined) throw err;
        found = again;
        await check(found);
      }
    }
    const result = await this.signup(workspaceId, who, caller, found);
    if (data) {
      // From the member's stream: its read model may not show a member created just now.
      const m = await this.members.get(workspaceId, result.member.id);
      const member = { id: m.id, email: m.email, phone: m.phone, name: m.name, externalId: m.externalId };
      await this.commands.execute(new UpsertSignupRecordsCommand(workspaceId, member, data, caller));
    }
    return result;
  }

  /**
   * A new person, the usual signup, is written at once, without looking anyone up: the
   * atomic write (createAtOnce) fails whole when a value is already claimed, and it says
   * by whom. Only then, or where the store cannot write atomically, is the member looked
   * up in the spec's order (externalId, then email, then phone). `found`: the member the
   * caller's own lookup found (null: nobody, so the write is tried at once).
   */
  private async signup(
    workspaceId: string,
    who: Normalised,
    caller: Caller,
    found?: number | null,
  ): Promise<SignupResult> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let existingId = attempt === 0 ? (found ?? undefined) : undefined;
      if (attempt === 0 && existingId === undefined) {
        const first = await this.createAtOnce(workspaceId, who);
        if (first?.kind === 'created') return first.result;
        // The value refused is the first the lookup would try: its holder is the member.
        if (first?.kind === 'taken' && first.field === LOOKUP_ORDER.find((f) => who[f]))
          existingId = first.holder;
        else existingId = await this.find(workspaceId, who);
      } else if (existingId === undefined) existingId = await this.find(workspaceId, who);
      if (existingId !== undefined) return this.existing(workspaceId, existingId, who, caller);
      const role = await this.roles.defaultFor(workspaceId, 'person');
      const accountUuid = randomUUID();
      const outcome = await this.members.create(
        this.newMember(workspaceId, who, role, accountUuid),
        role,
        'operator',
        undefined,
        true,
      );
      // Lost a race on one of the values: the next round finds the member that won it.
      if (outcome.kind !== 'created') continue;
      const account = await this.accounts.ensure(accountUuid, who, workspaceId);
      return this.respond(outcome.member, account, true);
    }
    throw new ConflictError(
      'member: the signup kept losing races with concurrent changes to this member; retry',
    );
  }

  private newMember(
    workspaceId: string,
    who: Normalised,
    role: Awaited<ReturnType<RoleLookup['defaultFor']>>,
    accountUuid: string,
  ): Parameters<MemberWriter['create']>[0] {
    return {
      workspaceId,
      accountUuid,
      ...who,
      memberRoleId: role.roleId,
      kind: 'person',
      notifySms: false,
      notifyEmail: false,
      notifyVoice: false,
    };
  }

  /**
   * Where the store writes several new streams atomically: the claims, the member, its
   * account and its token in one append, the same events the steps below append one by
   * one. Undefined where the store cannot; otherwise the outcome, nothing written unless
   * `created` (`taken` names the member holding a value).
   */
  private async createAtOnce(
    workspaceId: string,
    who: Normalised,
  ): Promise<
    | { kind: 'created'; result: SignupResult }
    | Exclude<Awaited<ReturnType<MemberWriter['create']>>, { kind: 'created' }>
    | undefined
  > {
    if (!this.members.canCreateMany) return undefined;
    const role = await this.roles.defaultFor(workspaceId, 'person');
    const newMember = this.newMember(workspaceId, who, role, randomUUID());
    const profile = { email: newMember.email, phone: newMember.phone, name: newMember.name };
    const registration = this.accounts.registration(newMember.accountUuid!, profile);
    let token = '';
    const outcome = await this.members.createWith(
      newMember,
      role,
      'operator',
      (m) => {
        const issued = this.tokens.newToken(m.workspaceId, m.id, registration.account.uuid);
        token = issued.token;
        return [registration, issued];
      },
      true,
    );
    if (outcome?.kind !== 'created') return outcome;
    const member = outcome.member;
    return {
      kind: 'created',
      result: {
        token,
        account: registration.account,
        member: { id: member.id, email: member.email, memberRoleId: member.memberRoleId },
        wasCreated: true,
      },
    };
  }

  private async find(workspaceId: string, who: Normalised): Promise<number | undefined> {
    for (const field of LOOKUP_ORDER) {
      const value = who[field];
      if (!value) continue;
      const holder = await this.members.holderOf(workspaceId, field, value);
      if (holder !== undefined) return holder;
    }
    return undefined;
  }

  /** An existing member signs in: no duplicate, no change to its record; an account-less contact gets its account now. */
  private async existing(
    workspaceId: string,
    memberId: number,
    who: Normalised,
    caller: Caller,
  ): Promise<SignupResult> {
    let member = await this.members.get(workspaceId, memberId);
    // Before anything is written (an account link, a token): not one who holds more than the caller.
    const [role, byDefault] = await Promise.all([
      this.roles.effective(member.memberRoleId),
      this.roles.defaultFor(workspaceId, member.kind),
    ]);
    assertMaySignIn(caller.scopes, role.permissions, byDefault.permissions);
    if (!member.accountUuid) {
      member = await this.members
        .linkAccount(workspaceId, memberId, randomUUID())
        .catch(async (err: unknown) => {
          // Another signup linked it first: use theirs.
          if (err instanceof ConflictError) return this.members.get(workspaceId, memberId);
          throw err;
        });
    }
    if (!member.accountUuid)
      throw new ConflictError('member: the member was archived while signing up; retry');
    const profile = {
      email: member.email ?? who.email,
      phone: member.phone ?? who.phone,
      name: member.name ?? who.name,
    };
    const account = await this.accounts.ensure(member.accountUuid!, profile, workspaceId);
    return this.respond(member, account, false);
  }

  private async respond(
    member: MemberSnapshot,
    account: AccountView,
    wasCreated: boolean,
  ): Promise<SignupResult> {
    const token = await this.tokens.issue(member.workspaceId, member.id, account.uuid);
    return {
      token,
      account,
      member: { id: member.id, email: member.email, memberRoleId: member.memberRoleId },
      wasCreated,
    };
  }
}
