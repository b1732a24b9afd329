import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Claims, CLAIMS } from '../../../core/claims/claims';
import { grants } from '../../../core/auth/scopes';
import { ConflictError, ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import { DataTypeFacts, normaliseExternalId } from '../domain/data-record';
import { checkNewValues, checkValueChanges } from '../domain/field-values';
import {
  assertMayEdit,
  assertTypeRecordsAccess,
  HeldGrant,
  seesDataType,
} from '../domain/record-access.policy';
import {
  DATA_TYPE_SLUG_CLAIM,
  recordClaimConflict,
  recordIdOf,
  RECORD_MEMBER_CLAIM,
  recordScope,
} from '../domain/record-claims';
import { RecordWriter } from './record-writer.service';
import {
  CheckSignupDataQuery,
  SignupDataCaller,
  UpsertSignupRecordsCommand,
} from './signup-records.messages';

interface Entry {
  slug: string;
  type: DataTypeFacts;
  externalId: string | null;
  values: unknown;
}

const ENTRY_KEYS = new Set(['externalId', 'values']);

/**
 * Resolves and checks every entry of a signup's `data`: the slug names a data type of the
 * workspace, the entry is `{externalId, values}`, the values fit the type. Writing records
 * for the member (another member than the caller) needs records:write (SPEC "Scopes", 5).
 */
async function resolve(
  records: RecordWriter,
  claims: Claims,
  workspaceId: string,
  data: Readonly<Record<string, unknown>>,
  caller: SignupDataCaller,
): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (const [slug, raw] of Object.entries(data)) {
    const path = `data.${slug}`;
    const owner = await claims.ownerOf(workspaceId, DATA_TYPE_SLUG_CLAIM, slug);
    const id = owner && /^datatype-(\d+)$/.exec(owner)?.[1];
    const noType = () => new ValidationError(`${path}: no data type with this slug exists in this workspace`);
    if (!id) throw noType();
    const type = await records.type(workspaceId, Number(id));
    // An admin-only type the caller does not see is, to it, a slug that names nothing.
    if (!seesDataType(caller, type.visibility)) throw noType();
    if (!grants(caller.scopes, 'records:write'))
      throw new ForbiddenError(`${path}: writing records for a member needs the scope records:write`);
    assertTypeRecordsAccess(caller, type.visibility);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new ValidationError(`${path}: must be an object with externalId and values`);
    const entry = raw as Record<string, unknown>;
    const unknown = Object.keys(entry).find((k) => !ENTRY_KEYS.has(k));
    if (unknown) throw new ValidationError(`${path}.${unknown}: unknown field`);
    const externalId = normaliseExternalId(entry.externalId, `${path}.externalId`);
    if (externalId === null && type.isCollection)
      throw new ValidationError(`${path}.externalId: is required for a data type that is a collection`);
    entries.push({ slug, type, externalId, values: entry.values ?? {} });
  }
  return entries;
}

@QueryHandler(CheckSignupDataQuery)
export class CheckSignupDataHandler implements IQueryHandler<CheckSignupDataQuery, void> {
  constructor(
    private readonly records: RecordWriter,
    @Inject(CLAIMS) private readonly claims: Claims,
  ) {}

  /**
   * Every entry is checked as UpsertSignupRecords will write it, before identity writes the
   * member, its account or its token: a record the write would update takes the values as
   * a change (and the caller must be allowed to edit it), a new one needs its required
   * fields; an externalId held by a record that is not the member's, or a second record of
   * a profile type, is the 409 the write would meet after the member exists.
   */
  async execute(q: CheckSignupDataQuery): Promise<void> {
    const entries = await resolve(this.records, this.claims, q.workspaceId, q.data, q.caller);
    let held: HeldGrant[] | undefined;
    const mayEdit = async (type: DataTypeFacts, recordMemberId: number | null) =>
      assertMayEdit(
        q.caller,
        { memberId: recordMemberId, dataTypeId: type.dataTypeId, visibility: type.visibility },
        (held ??= await this.records.heldGrants(q.workspaceId, q.caller)),
      );
    for (const e of entries) {
      const path = `data.${e.slug}`;
      let existing: number | undefined;
      if (e.externalId !== null) {
        existing = await this.records.holderOf(e.type, e.externalId);
        if (existing !== undefined) {
          const { state } = await this.records.load(existing);
          // As the upsert: access first, since the conflict names the holder's owner.
          await mayEdit(e.type, state.memberId);
          if (q.memberId === null || state.memberId !== q.memberId)
            throw new ConflictError(
              `${path}.externalId: record ${existing} of this data type holds this externalId and belongs to ${state.memberId === null ? 'no member' : `member ${state.memberId}`}`,
            );
        }
      }
      if (!e.type.isCollection && q.memberId !== null) {
        const owner = await this.claims.ownerOf(
          recordScope(q.workspaceId, e.type.dataTypeId),
          RECORD_MEMBER_CLAIM,
          String(q.memberId),
        );
        const own = owner === undefined ? undefined : recordIdOf(owner);
        if (own !== undefined && e.externalId !== null && existing !== own)
          throw new ConflictError(
            `${path}: this data type is not a collection and the member already has record ${own} of it`,
          );
        if (own !== undefined && e.externalId === null) {
          await mayEdit(e.type, q.memberId);
          existing = own;
        }
      }
      // A record that exists takes the values as a change; a new one needs its required fields.
      if (existing !== undefined) checkValueChanges(e.type.fields, e.values, `${path}.values`);
      else checkNewValues(e.type.fields, e.values, `${path}.values`);
    }
  }
}

/**
 * The member's records of a signup: by externalId, or (a profile type, no externalId)
 * the member's one record of the type, created or updated.
 */
@CommandHandler(UpsertSignupRecordsCommand)
export class UpsertSignupRecordsHandler implements ICommandHandler<
  UpsertSignupRecordsCommand,
  Record<string, number>
> {
  constructor(
    private readonly records: RecordWriter,
    @Inject(CLAIMS) private readonly claims: Claims,
  ) {}

  async execute(cmd: UpsertSignupRecordsCommand): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const caller = { scopes: cmd.caller.scopes, memberId: cmd.caller.memberId };
    const memberId = cmd.member.id;
    for (const e of await resolve(this.records, this.claims, cmd.workspaceId, cmd.data, cmd.caller)) {
      // The caller holds records:write (resolve); another member's existing record needs admin or a grant.
      const held = await this.records.heldGrants(cmd.workspaceId, caller);
      if (e.externalId !== null) {
        const { record } = await this.records.upsert(
          e.type,
          e.externalId,
          { memberId, fieldValues: e.values, member: cmd.member },
          caller,
          held,
          () => undefined,
        );
        out[e.slug] = record.recordId;
        continue;
      }
      const profileOf = async () => {
        const owner = await this.claims.ownerOf(
          recordScope(cmd.workspaceId, e.type.dataTypeId),
          RECORD_MEMBER_CLAIM,
          String(memberId),
        );
        return owner === undefined ? undefined : recordIdOf(owner);
      };
      const update = async (recordId: number) => {
        await this.records.update(e.type, recordId, e.values, (r) =>
          assertMayEdit(
            caller,
            { memberId: r.memberId, dataTypeId: e.type.dataTypeId, visibility: e.type.visibility },
            held,
          ),
        );
        out[e.slug] = recordId;
      };
      const existing = await profileOf();
      if (existing !== undefined) {
        await update(existing);
        continue;
      }
      const outcome = await this.records.create(
        e.type,
        { memberId, externalId: null, fieldValues: e.values },
        cmd.member,
      );
      if (outcome.kind === 'created') {
        out[e.slug] = outcome.record.recordId;
        continue;
      }
      // A concurrent signup of this member created its one record of the type since the
      // look-up: the values are a change to that record, as if it had been found.
      const since = await profileOf();
      if (since === undefined) throw recordClaimConflict(outcome.error);
      await update(since);
    }
    return out;
  }
}
