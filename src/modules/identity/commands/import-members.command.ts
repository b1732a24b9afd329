import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { nextId, nextIds } from '../../../core/database/ids';
import { DomainError, ValidationError } from '../../../core/http/domain-errors';
import { checkAgentSettings } from '../domain/agent-settings';
import type { MemberKind } from '../domain/identity.events';
import type { MemberChanges, UniqueMemberField } from '../domain/member.events';
import type { NewMember } from '../domain/member';
import { assertNoEscalation, checkRoleAssignment, RoleFacts } from '../../roles';
import { Caller, MemberChangesInput, normaliseChanges } from './member-input';
import { MemberWriter } from './member-writer.service';
import { RoleLookup } from './role-lookup.service';

export const MAX_IMPORT_ROWS = 10_000;
const CONCURRENCY = 8;
/** Rows per atomic write: ~1,500 events, a statement of a few hundred kB. */
const BATCH_ROWS = 500;
/** Below this a batch is not worth its failed statement: rows go one by one. */
const MIN_BATCH = 8;
const MAX_ATTEMPTS = 4;
const ROW_FIELDS = new Set([
  'email',
  'phone',
  'name',
  'externalId',
  'memberRoleId',
  'kind',
  'notifySms',
  'notifyEmail',
  'notifyVoice',
  'agentModel',
  'agentInstructions',
]);
const STRING_FIELDS = ['email', 'phone', 'name', 'externalId', 'agentModel', 'agentInstructions'] as const;
const LOOKUP_ORDER: UniqueMemberField[] = ['externalId', 'email', 'phone'];

export class ImportMembersCommand {
  constructor(
    readonly workspaceId: string,
    readonly rows: readonly unknown[],
    readonly upsert: boolean,
    readonly caller: Caller,
  ) {}
}

export interface ImportResultItem {
  index: number;
  status: 'created' | 'updated' | 'unchanged';
  memberId: number;
  externalId: string | null;
}

export interface ImportResult {
  success: boolean;
  totalCount: number;
  importedCount: number;
  results: ImportResultItem[];
  errors: { index: number; detail: string }[] | null;
}

interface ParsedRow {
  index: number;
  kind: MemberKind;
  kindGiven: boolean;
  changes: MemberChanges;
}

/** Row validation happens here, not in the DTO: a bad row fails alone instead of the request. */
export function parseRow(raw: unknown, index: number): ParsedRow {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ValidationError('row: must be an object');
  const row = raw as Record<string, unknown>;
  const unknown = Object.keys(row).find((k) => !ROW_FIELDS.has(k));
  if (unknown) throw new ValidationError(`${unknown}: unknown field`);
  for (const f of STRING_FIELDS) {
    if (row[f] !== undefined && row[f] !== null && typeof row[f] !== 'string')
      throw new ValidationError(`${f}: must be a string`);
  }
  if (row.kind !== undefined && row.kind !== 'person' && row.kind !== 'agent')
    throw new ValidationError('kind: must be one of person, agent');
  const input = Object.fromEntries(
    Object.entries(row).filter(([k, v]) => k !== 'kind' && v !== null),
  ) as MemberChangesInput;
  const changes = normaliseChanges(input);
  // A row naming no kind may still upsert an existing agent: checked against the member met.
  if (row.kind === 'person') checkAgentSettings('person', changes);
  return {
    index,
    kind: (row.kind as MemberKind | undefined) ?? 'person',
    kindGiven: row.kind !== undefined,
    changes,
  };
}

/**
 * POST /w/{wid}/members/import: up to 10,000 contacts (members without an account yet),
 * reported per row like the bulk records response. Rows are matched against existing
 * members by externalId, then email, then phone; `upsert` updates those instead of
 * failing them. The Agent rules fail a row, not the request.
 */
@CommandHandler(ImportMembersCommand)
export class ImportMembersHandler implements ICommandHandler<ImportMembersCommand, ImportResult> {
  constructor(
    private readonly members: MemberWriter,
    private readonly roles: RoleLookup,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: ImportMembersCommand): Promise<ImportResult> {
    const results: ImportResultItem[] = [];
    const errors: { index: number; detail: string }[] = [];
    const rows: ParsedRow[] = [];
    const firstRowOf = new Map<string, number>();
    cmd.rows.forEach((raw, index) => {
      try {
        const row = parseRow(raw, index);
        // Two rows for one person would race each other; the later one fails, deterministically.
        for (const field of LOOKUP_ORDER) {
          const v = row.changes[field];
          const seen = v ? firstRowOf.get(`${field}:${v}`) : undefined;
          if (seen !== undefined)
            throw new ValidationError(`${field}: duplicates row ${seen} of this request`);
        }
        for (const field of LOOKUP_ORDER)
          if (row.changes[field]) firstRowOf.set(`${field}:${row.changes[field]}`, index);
        rows.push(row);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        errors.push({ index, detail: err.message });
      }
    });

    // One sequence round trip for the whole request; a failed row burns its id (ids are unique, not gapless).
    const ids = await nextIds(this.db, 'member_id_seq', rows.length);
    const roles = new Map<string, Promise<RoleFacts>>();
    const cached = (key: string, load: () => Promise<RoleFacts>) => {
      if (!roles.has(key)) roles.set(key, load());
      return roles.get(key)!;
    };
    const roleOf = (row: ParsedRow) =>
      row.changes.memberRoleId !== undefined
        ? cached(`id:${row.changes.memberRoleId}`, () => this.roles.facts(row.changes.memberRoleId!))
        : cached(`default:${row.kind}`, () => this.roles.defaultFor(cmd.workspaceId, row.kind));
    const idOf = new Map(rows.map((row, i) => [row, ids[i]]));

    // Row by row: the path for rows that meet existing members or lose races. Rows that
    // meet one member (say by externalId and by email) go one after the other in request
    // order, as if the request were applied row by row; other rows run side by side.
    const oneByOne = async (batch: ParsedRow[]) => {
      const chains = cmd.upsert ? await this.chainsByMember(cmd.workspaceId, batch) : batch.map((r) => [r]);
      await inPool(chains, CONCURRENCY, async (chain) => {
        for (const row of chain) {
          try {
            results.push(await this.importRow(cmd, row, idOf.get(row)!, roleOf));
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            errors.push({ index: row.index, detail: err.message });
          }
        }
      });
    };

    // New contacts, the common case, go in batches: each batch's members and claims in one
    // atomic write. A batch meeting a taken value writes nothing and is halved, so a few
    // existing members among thousands of new ones cost a few failed statements, and only
    // the rows that meet them go one by one. Without multi-stream writes (EventStoreDB)
    // every row goes one by one.
    const batched = async (batch: ParsedRow[]): Promise<void> => {
      if (batch.length < MIN_BATCH || !this.members.canCreateMany) return oneByOne(batch);
      const created = await this.members.createMany(
        cmd.workspaceId,
        await Promise.all(
          batch.map(async (row) => {
            const role = await roleOf(row);
            return { member: this.newMember(cmd, row, idOf.get(row)!, role), role };
          }),
        ),
        'operator',
      );
      if (!created) {
        const half = Math.ceil(batch.length / 2);
        await batched(batch.slice(0, half));
        return batched(batch.slice(half));
      }
      created.forEach((member, i) =>
        results.push({
          index: batch[i].index,
          status: 'created',
          memberId: member.id,
          externalId: member.externalId,
        }),
      );
    };

    // Rows whose role rules fail are reported now; they never reach a batch.
    const ready: ParsedRow[] = [];
    const single: ParsedRow[] = [];
    for (const row of rows) {
      try {
        const role = await roleOf(row);
        checkRoleAssignment(row.kind, role, cmd.workspaceId, 'operator');
        checkAgentSettings(row.kind, row.changes);
        if (row.changes.memberRoleId !== undefined)
          assertNoEscalation(cmd.caller.scopes, role.permissions, 'memberRoleId');
        ready.push(row);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        // An upsert row may match an existing member, whose rules differ: decided one by one.
        if (cmd.upsert) single.push(row);
        else errors.push({ index: row.index, detail: err.message });
      }
    }
    for (let i = 0; i < ready.length; i += BATCH_ROWS) await batched(ready.slice(i, i + BATCH_ROWS));
    await oneByOne(single);

    results.sort((a, b) => a.index - b.index);
    errors.sort((a, b) => a.index - b.index);
    return {
      success: errors.length === 0,
      totalCount: cmd.rows.length,
      importedCount: results.length,
      results,
      errors: errors.length ? errors : null,
    };
  }

  /**
   * Without upsert, a row goes straight for the claims: a taken value is the row's error,
   * and new contacts (the common case) cost no lookups. With upsert, the lookup comes
   * first, so an existing member is matched before the row's own rules for a new one apply.
   */
  private async importRow(
    cmd: ImportMembersCommand,
    row: ParsedRow,
    memberId: number,
    roleOf: (row: ParsedRow) => Promise<RoleFacts>,
  ): Promise<ImportResultItem> {
    const { workspaceId, caller } = cmd;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const existing = cmd.upsert ? await this.find(workspaceId, row.changes) : undefined;
      if (existing) return this.updateRow(cmd, row, existing.memberId);
      const role = await roleOf(row);
      checkRoleAssignment(row.kind, role, workspaceId, 'operator');
      checkAgentSettings(row.kind, row.changes);
      if (row.changes.memberRoleId !== undefined)
        assertNoEscalation(caller.scopes, role.permissions, 'memberRoleId');
      const { memberId: _, ...input } = this.newMember(cmd, row, memberId, role);
      const outcome = await this.members.create(input, role, 'operator', memberId);
      if (outcome.kind === 'created')
        return {
          index: row.index,
          status: 'created',
          memberId: outcome.member.id,
          externalId: outcome.member.externalId,
        };
      if (outcome.kind === 'taken' && !cmd.upsert) {
        throw new ValidationError(
          `${outcome.field}: a member with this ${outcome.field} already exists (member ${outcome.holder}); send upsert: true to update it`,
        );
      }
      // Fenced (its id is spent) or lost a race to a concurrent write: the next round sees the winner.
      if (outcome.kind === 'fenced') memberId = await nextId(this.db, 'member_id_seq');
    }
    throw new ValidationError('row: kept losing races with concurrent changes; retry it');
  }

  private newMember(cmd: ImportMembersCommand, row: ParsedRow, memberId: number, role: RoleFacts): NewMember {
    const c = row.changes;
    return {
      memberId,
      workspaceId: cmd.workspaceId,
      accountUuid: null,
      email: c.email ?? null,
      phone: c.phone ?? null,
      name: c.name ?? null,
      externalId: c.externalId ?? null,
      memberRoleId: role.roleId,
      kind: row.kind,
      notifySms: c.notifySms ?? false,
      notifyEmail: c.notifyEmail ?? false,
      notifyVoice: c.notifyVoice ?? false,
      ...(row.kind === 'agent'
        ? { agentModel: c.agentModel ?? null, agentInstructions: c.agentInstructions ?? null }
        : {}),
    };
  }

  /** The row's status is what its own update did, not a comparison of timestamps another write may move. */
  private async updateRow(
    cmd: ImportMembersCommand,
    row: ParsedRow,
    memberId: number,
  ): Promise<ImportResultItem> {
    const loaded = await this.members.loaded(cmd.workspaceId, memberId);
    const before = loaded.state.member!;
    if (row.kindGiven && before.kind !== row.kind)
      throw new ValidationError(`kind: member ${before.id} is a ${before.kind}; kind cannot change`);
    if (row.changes.memberRoleId !== undefined && row.changes.memberRoleId !== before.memberRoleId) {
      // As for PUT member: nobody takes away scopes they do not hold.
      await this.roles.assertMayMoveOff(cmd.caller.scopes, before.memberRoleId, 'memberRoleId');
    }
    await this.roles.assertMaySteerAgent(cmd.caller.scopes, before, row.changes);
    const { member, appended } = await this.members.updateOutcome(cmd.workspaceId, memberId, row.changes, {
      assigner: 'operator',
      checkRole: (role) => assertNoEscalation(cmd.caller.scopes, role.permissions, 'memberRoleId'),
      loaded,
    });
    return {
      index: row.index,
      status: appended ? 'updated' : 'unchanged',
      memberId: member.id,
      externalId: member.externalId,
    };
  }

  /**
   * Groups rows by the existing member they meet, each group in request order; a row
   * meeting none is a group of its own. Only the order comes from this lookup: each row
   * looks its member up again when its turn comes, after the rows before it.
   */
  private async chainsByMember(workspaceId: string, rows: ParsedRow[]): Promise<ParsedRow[][]> {
    const found = new Map<ParsedRow, number | undefined>();
    await inPool(rows, CONCURRENCY, async (row) => {
      found.set(row, (await this.find(workspaceId, row.changes))?.memberId);
    });
    const chains = new Map<string, ParsedRow[]>();
    for (const row of [...rows].sort((a, b) => a.index - b.index)) {
      const memberId = found.get(row);
      const key = memberId === undefined ? `row:${row.index}` : `member:${memberId}`;
      chains.set(key, [...(chains.get(key) ?? []), row]);
    }
    return [...chains.values()];
  }

  private async find(
    workspaceId: string,
    c: MemberChanges,
  ): Promise<{ memberId: number; field: UniqueMemberField } | undefined> {
    for (const field of LOOKUP_ORDER) {
      const v = c[field];
      if (!v) continue;
      const memberId = await this.members.holderOf(workspaceId, field, v);
      if (memberId !== undefined) return { memberId, field };
    }
    return undefined;
  }
}

/** Runs `fn` over `items`, at most `concurrency` at a time. */
async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
