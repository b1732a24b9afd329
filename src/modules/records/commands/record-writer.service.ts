import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { Claims, CLAIMS, ClaimTakenError } from '../../../core/claims/claims';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { nextId } from '../../../core/database/ids';
import { AppendResult, WrongExpectedRevisionError } from '../../../core/event-store/event-store.port';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { GetMemberContactsQuery, MemberContact } from '../../identity';
import { DataRecordState, dataRecordDecider, DataTypeFacts, valuesStillFit } from '../domain/data-record';
import { DataRecordEvent, RecordMember, recordStream } from '../domain/data-record.events';
import type { FieldValue, FieldValues } from '../domain/field-values';
import { dataTypeDecider, DataTypeState } from '../domain/data-type';
import { dataTypeFieldsTarget, dataTypeStream } from '../domain/data-type.events';
import {
  assertMayEdit,
  assertTypeRecordsAccess,
  HeldGrant,
  RecordCaller,
} from '../domain/record-access.policy';
import {
  recordClaimConflict,
  recordClaims,
  recordIdOf,
  RECORD_EXTERNAL_ID_CLAIM,
  recordScope,
} from '../domain/record-claims';

export interface NewRecordInput {
  memberId: number | null;
  externalId: string | null;
  fieldValues: unknown;
}

export type CreateOutcome =
  | { kind: 'created'; record: DataRecordState }
  /** Another record holds the externalId (or the member's one record of a profile type). */
  | { kind: 'taken'; error: ClaimTakenError };

/** A record of a type as its read model lists it (force-delete of the type). */
export interface RecordRow {
  recordId: number;
  memberId: number | null;
  externalId: string | null;
  revision: bigint;
}

const MAX_ATTEMPTS = 5;
const DELETE_BATCH = 500;
const UPSERT_RETRIES = 10;

/**
 * The record write path shared by the record routes, bulk import and signup's `data`:
 * a type's facts from its own stream, a record's decisions with its claims (externalId per
 * type; the member in a type that is no collection) taken with the append itself.
 */
@Injectable()
export class RecordWriter {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(CLAIMS) private readonly claims: Claims,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
    private readonly waiter: ConsistencyWaiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: ReferenceGate,
  ) {}

  /** The data type as its stream tells; 404 when absent, deleted or of another workspace. */
  async type(workspaceId: string, dataTypeId: number): Promise<DataTypeFacts> {
    const { state } = await this.repo.loadShared(dataTypeStream(dataTypeId), dataTypeDecider);
    if (state.status !== 'active' || state.workspaceId !== workspaceId)
      throw new NotFoundError('Data type not found');
    return state;
  }

  /** Active members of the workspace among `ids`, by id (identity's query: members are its own). */
  async members(workspaceId: string, ids: readonly number[]): Promise<Map<number, RecordMember>> {
    if (!ids.length) return new Map();
    const found = await this.queries.execute<GetMemberContactsQuery, MemberContact[]>(
      new GetMemberContactsQuery(workspaceId, ids),
    );
    return new Map(found.filter((m) => m.status === 'active').map((m) => [m.id, m]));
  }

  async member(workspaceId: string, memberId: number | null): Promise<RecordMember | null | undefined> {
    if (memberId === null) return null;
    return (await this.members(workspaceId, [memberId])).get(memberId);
  }

  /** The grants the caller holds as grantee (none without a member). */
  async heldGrants(workspaceId: string, caller: RecordCaller): Promise<HeldGrant[]> {
    if (caller.memberId === undefined) return [];
    const rows = (await this.db.query(
      `SELECT owner_member_id, access, data_type_id FROM record_grants WHERE workspace_id = $1 AND grantee_member_id = $2`,
      [workspaceId, caller.memberId],
    )) as { owner_member_id: number; access: 'read' | 'write'; data_type_id: number | null }[];
    return rows.map((r) => ({
      ownerMemberId: r.owner_member_id,
      access: r.access,
      dataTypeId: r.data_type_id,
    }));
  }

  /** The record holding an externalId in a type, if any. */
  async holderOf(type: DataTypeFacts, externalId: string): Promise<number | undefined> {
    const owner = await this.claims.ownerOf(
      recordScope(type.workspaceId, type.dataTypeId),
      RECORD_EXTERNAL_ID_CLAIM,
      externalId,
    );
    return owner === undefined ? undefined : recordIdOf(owner);
  }

  async load(recordId: number): Promise<{ state: DataRecordState; revision: bigint | undefined }> {
    return this.repo.load(recordStream(recordId), dataRecordDecider);
  }

  newRecordId(): Promise<number> {
    return nextId(this.db, 'data_record_id_seq');
  }

  /** Decides a new record (throws its validation errors) without writing it. */
  decideCreate(
    type: DataTypeFacts,
    recordId: number,
    input: NewRecordInput,
    member: RecordMember | null | undefined,
  ): DataRecordEvent[] {
    return dataRecordDecider.decide(
      {
        type: 'CreateRecord',
        recordId,
        dataType: type,
        memberId: input.memberId,
        member,
        externalId: input.externalId,
        fieldValues: input.fieldValues,
        now: new Date().toISOString(),
      },
      dataRecordDecider.initialState(),
    );
  }

  async create(
    type: DataTypeFacts,
    input: NewRecordInput,
    member: RecordMember | null | undefined,
    recordId?: number,
  ): Promise<CreateOutcome> {
    recordId ??= await this.newRecordId();
    const events = this.decideCreate(type, recordId, input, member);
    const empty = dataRecordDecider.initialState();
    let append: AppendResult;
    try {
      append = await this.repo.appendClaimed(
        recordStream(recordId),
        type.workspaceId,
        events,
        'no_stream',
        recordClaims(events, empty, type.isCollection),
      );
    } catch (err) {
      if (err instanceof ClaimTakenError) return { kind: 'taken', error: err };
      throw err;
    }
    const record = events.reduce(dataRecordDecider.evolve, empty);
    await this.undoIfTypeDeleted(type, [append], [record]);
    return { kind: 'created', record };
  }

  /**
   * A record appended while its type was being deleted: the type's stream is read again
   * after the append, and if the deletion committed meanwhile the new records are deleted
   * at once and the write answers 404, as it would have a moment later. A record whose
   * append committed before the deletion is the deletion's to remove (DeleteDataTypeHandler
   * lists the type's records once the read model has caught up with the deletion), so
   * between the two no record outlives its type.
   */
  private async undoIfTypeDeleted(
    type: DataTypeFacts,
    appended: readonly AppendResult[],
    records: readonly {
      recordId: number;
      memberId: number | null;
      externalId: string | null;
      fieldValues: FieldValues;
    }[],
  ): Promise<void> {
    // A deletion whose transaction began before the append's and commits after it is not
    // in the type's stream yet right after the append, and the read model passes it before
    // these records (their order is the transactions'), so its own listing misses them too.
    // Once the projections have passed the append, every transaction that began before it
    // has ended and the re-read sees such a deletion. A create's response waits for the
    // same projections (read-your-writes), so it answers no later for this.
    const { state, settled } = await this.typeOnceProjected(type, appended);
    // A type that stopped or started being a collection meanwhile: these records took (or
    // did not take) the claim of one record per member by what it was, so they go too
    // (UpdateDataTypeHandler undoes a switch that meets records committed before it). So do
    // records holding a value of a field the type removed, retyped or narrowed meanwhile:
    // the change's drop of such values has passed them by, and they would keep a value the
    // schema no longer has.
    const switched =
      state.status === 'active' &&
      (!settled ||
        state.isCollection !== type.isCollection ||
        records.some((r) => !valuesStillFit(type, state, r.fieldValues)));
    if (state.status === 'active' && !switched) return;
    await this.deleteAll(
      type,
      records.map((r) => ({
        recordId: r.recordId,
        memberId: r.memberId,
        externalId: r.externalId,
        revision: 0n,
      })),
    );
    if (switched)
      throw new ConflictError(
        state.isCollection !== type.isCollection
          ? 'isCollection: the data type changed while the record was written; retry'
          : 'fieldValues: the data type changed while the record was written; retry',
      );
    throw new NotFoundError('Data type not found');
  }

  /**
   * The type as its stream stands once the projections have passed `appended`: a schema
   * change whose transaction began before the append's has committed by then, and so has
   * a change of fields that read the read models before they showed the append
   * (UpdateDataTypeHandler marks itself in the gate first). `settled` is false when such a
   * change was still under way after the wait: the write cannot tell whether it crossed it.
   */
  private async typeOnceProjected(
    type: DataTypeFacts,
    appended: readonly AppendResult[],
  ): Promise<{ state: DataTypeState; settled: boolean }> {
    await this.waiter.waitFor(appended, Math.max(this.config.readYourWritesTimeoutMs, 15_000));
    const settled = await this.gate.removalsOver(dataTypeFieldsTarget(type.dataTypeId));
    return {
      state: (await this.repo.loadShared(dataTypeStream(type.dataTypeId), dataTypeDecider)).state,
      settled,
    };
  }

  /**
   * An update crossing a schema change, as a create does (undoIfTypeDeleted): once the
   * projections have passed the update, the type is read again; if a field the update set
   * a value for was removed, retyped, narrowed or had its values dropped since the update
   * was decided, the update is undone by another DataRecordUpdated (each field it wrote,
   * unless changed again since, back to its previous value where that still fits, else
   * cleared) and the write answers 409. A schema change that reads the read model after
   * the update was projected sees its values (409 without force; with force it drops them).
   */
  private async undoIfSchemaMoved(
    type: DataTypeFacts,
    appended: AppendResult,
    recordId: number,
    written: Record<string, FieldValue | null>,
    previous: Record<string, FieldValue | null>,
  ): Promise<void> {
    const { state, settled } = await this.typeOnceProjected(type, [appended]);
    if (state.status !== 'active' || (settled && valuesStillFit(type, state, written))) return;
    await this.repo
      .handle({
        streamName: recordStream(recordId),
        workspaceId: type.workspaceId,
        decider: dataRecordDecider,
        command: {
          from: async (record: DataRecordState) => ({
            type: 'RevertUpdate' as const,
            decidedAgainst: type,
            dataType: state,
            written,
            previous,
            member:
              record.status === 'active'
                ? ((await this.member(type.workspaceId, record.memberId)) ?? null)
                : null,
            now: new Date().toISOString(),
          }),
        },
      })
      .catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err; // deleted meanwhile: nothing to undo
      });
    throw new ConflictError('fieldValues: the data type changed while the record was written; retry');
  }

  get canCreateMany(): boolean {
    return this.repo.canAppendClaimedMany;
  }

  /**
   * New records with their claims in one atomic write; false, nothing written, when a claim
   * or id is taken. The check that the type was not deleted meanwhile (which deletes them
   * and throws 404 if it was) is awaited here, or, with `deferCheck`, handed to it: an
   * import writes its next batch while the check waits for the projections, and awaits
   * every batch's check before it answers.
   */
  async createMany(
    type: DataTypeFacts,
    decided: readonly { recordId: number; events: DataRecordEvent[] }[],
    deferCheck?: (check: Promise<void>) => void,
  ): Promise<boolean> {
    const empty = dataRecordDecider.initialState();
    let appended: AppendResult[];
    try {
      appended = await this.repo.appendClaimedMany(
        type.workspaceId,
        decided.map((d) => ({
          streamName: recordStream(d.recordId),
          events: d.events,
          expectedRevision: 'no_stream' as const,
          plan: recordClaims(d.events, empty, type.isCollection),
        })),
      );
    } catch (err) {
      if (err instanceof ClaimTakenError || err instanceof WrongExpectedRevisionError) return false;
      throw err;
    }
    const check = this.undoIfTypeDeleted(
      type,
      appended,
      decided.map((d) => d.events.reduce(dataRecordDecider.evolve, empty)),
    );
    if (deferCheck) deferCheck(check);
    else await check;
    return true;
  }

  /**
   * Applies a partial change of values; `authorise` is called with the record as each
   * attempt finds it (its owner decides who may edit). Returns the record and whether
   * anything was appended.
   */
  async update(
    type: DataTypeFacts,
    recordId: number,
    fieldValues: unknown,
    authorise: (record: DataRecordState) => void,
    expectedRevision?: bigint,
    maxRetries?: number,
  ): Promise<{ record: DataRecordState; appended: boolean }> {
    let current: DataRecordState | undefined;
    const { state, events, append } = await this.repo.handle({
      streamName: recordStream(recordId),
      workspaceId: type.workspaceId,
      decider: dataRecordDecider,
      expectedRevision,
      maxRetries,
      command: {
        from: async (state: DataRecordState) => {
          if (
            state.status === 'active' &&
            state.workspaceId === type.workspaceId &&
            state.dataTypeId === type.dataTypeId
          )
            authorise(state);
          current = state;
          return {
            type: 'UpdateRecord' as const,
            dataType: type,
            fieldValues,
            member:
              state.status === 'active'
                ? ((await this.member(type.workspaceId, state.memberId)) ?? null)
                : null,
            now: new Date().toISOString(),
          };
        },
      },
    });
    const e = events[0];
    if (e?.type === 'DataRecordUpdated' && append)
      await this.undoIfSchemaMoved(type, append, recordId, e.data.changes, e.data.previous);
    return events.length ? { record: state, appended: true } : { record: current!, appended: false };
  }

  async delete(
    type: DataTypeFacts,
    recordId: number,
    authorise: (record: DataRecordState) => void,
    expectedRevision?: bigint,
  ): Promise<void> {
    await this.repo.handle({
      streamName: recordStream(recordId),
      workspaceId: type.workspaceId,
      decider: dataRecordDecider,
      expectedRevision,
      command: {
        from: (state: DataRecordState) => {
          if (
            state.status === 'active' &&
            state.workspaceId === type.workspaceId &&
            state.dataTypeId === type.dataTypeId
          )
            authorise(state);
          return { type: 'DeleteRecord' as const, dataType: type, now: new Date().toISOString() };
        },
      },
      claims: (events, state) => recordClaims(events, state, type.isCollection),
    });
  }

  /**
   * The records of a type being force-deleted, as the read model lists them (read before
   * the type's deletion is appended: its projection then drops the rows).
   */
  async recordsOf(type: DataTypeFacts): Promise<RecordRow[]> {
    const rows = (await this.db.query(
      `SELECT id, member_id, external_id, stream_revision::text AS stream_revision
         FROM data_records WHERE data_type_id = $1 AND workspace_id = $2 ORDER BY id`,
      [type.dataTypeId, type.workspaceId],
    )) as { id: number; member_id: number | null; external_id: string | null; stream_revision: string }[];
    return rows.map((r) => ({
      recordId: r.id,
      memberId: r.member_id,
      externalId: r.external_id,
      revision: BigInt(r.stream_revision),
    }));
  }

  /**
   * A DataRecordDeleted in each record's stream (its claims released), for a type deleted
   * with `force`: each record's history ends as a DELETE of the record would end it, and
   * webhooks see every record go. Batches of DELETE_BATCH records in one atomic write,
   * expecting the revision the read model shows; a batch that meets a newer revision (or
   * an event store without multi-stream writes) goes record by record through the decider.
   */
  async deleteAll(type: DataTypeFacts, rows: readonly RecordRow[]): Promise<void> {
    const now = new Date().toISOString();
    const oneByOne = async (batch: readonly RecordRow[]) => {
      for (const r of batch)
        await this.delete(type, r.recordId, () => undefined).catch((err: unknown) => {
          if (!(err instanceof NotFoundError)) throw err; // deleted meanwhile
        });
    };
    for (let i = 0; i < rows.length; i += DELETE_BATCH) {
      const batch = rows.slice(i, i + DELETE_BATCH);
      if (!this.canCreateMany) {
        await oneByOne(batch);
        continue;
      }
      try {
        await this.repo.appendClaimedMany(
          type.workspaceId,
          batch.map((r) => {
            const event: DataRecordEvent = {
              type: 'DataRecordDeleted',
              data: {
                recordId: r.recordId,
                workspaceId: type.workspaceId,
                dataTypeId: type.dataTypeId,
                memberId: r.memberId,
                externalId: r.externalId,
                deletedAt: now,
              },
            };
            const before: DataRecordState = {
              ...dataRecordDecider.initialState(),
              status: 'active',
              recordId: r.recordId,
              workspaceId: type.workspaceId,
              dataTypeId: type.dataTypeId,
              memberId: r.memberId,
              externalId: r.externalId,
            };
            return {
              streamName: recordStream(r.recordId),
              events: [event],
              expectedRevision: r.revision,
              plan: recordClaims([event], before, type.isCollection),
            };
          }),
        );
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError || err instanceof ClaimTakenError)) throw err;
        await oneByOne(batch);
      }
    }
  }

  /**
   * Creates the record of an externalId or updates the one holding it. Concurrent upserts
   * of one externalId meet at its claim: one creates, the others find it and update it.
   * `mayCreate` / `mayEdit` are the caller's rules (checked before anything is written).
   */
  async upsert(
    type: DataTypeFacts,
    externalId: string,
    input: {
      memberId: number | null;
      fieldValues: unknown;
      /** The member as the caller knows it (signup: a member its read model may not show yet). */
      member?: RecordMember;
    },
    caller: RecordCaller,
    held: readonly HeldGrant[],
    mayCreate: () => void,
  ): Promise<{ record: DataRecordState; wasCreated: boolean; appended: boolean }> {
    assertTypeRecordsAccess(caller, type.visibility);
    let member: RecordMember | null | undefined = input.member;
    let memberLoaded = input.member !== undefined;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const holder = await this.holderOf(type, externalId);
      if (holder !== undefined) {
        // Upserts of one externalId all land on one stream: more room for lost races than a PUT.
        // Access first: the conflict below names the holder's owner, which only a caller
        // allowed to edit that record may learn.
        const edit = (r: DataRecordState) => {
          assertMayEdit(
            caller,
            { memberId: r.memberId, dataTypeId: type.dataTypeId, visibility: type.visibility },
            held,
          );
          if (input.memberId !== null && r.memberId !== input.memberId)
            throw new ConflictError(
              `externalId: record ${r.recordId} with this externalId belongs to ${r.memberId === null ? 'no member' : `member ${r.memberId}`}`,
            );
        };
        const { record, appended } = (await this.update(
          type,
          holder,
          input.fieldValues,
          edit,
          undefined,
          UPSERT_RETRIES,
        ).catch((err: unknown) => {
          // Deleted between the lookup and the load (its claim is free now: create), or
          // still losing races after the retries: go round again.
          if (err instanceof NotFoundError || err instanceof WrongExpectedRevisionError) return undefined;
          throw err;
        })) ?? { record: undefined, appended: false };
        if (record) return { record, wasCreated: false, appended };
        continue;
      }
      mayCreate();
      if (!memberLoaded) {
        member = await this.member(type.workspaceId, input.memberId);
        memberLoaded = true;
      }
      const outcome = await this.create(
        type,
        { memberId: input.memberId, fieldValues: input.fieldValues, externalId },
        member,
      );
      if (outcome.kind === 'created') return { record: outcome.record, wasCreated: true, appended: true };
      if (outcome.error.kind !== RECORD_EXTERNAL_ID_CLAIM.name) throw recordClaimConflict(outcome.error);
      // Lost the race for the externalId: the next round finds the winner and updates it.
    }
    throw new ConflictError('externalId: the upsert kept losing races with concurrent changes; retry');
  }
}
