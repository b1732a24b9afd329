import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { EventSourcedRepository, HandleResult } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { nextId } from '../../../core/database/ids';
import { ConflictError } from '../../../core/http/domain-errors';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { DataFieldInput, dataTypeDecider, DataTypeState } from '../domain/data-type';
import {
  DataTypeEvent,
  dataTypeFieldsTarget,
  dataTypeStream,
  DataTypeUpdated,
} from '../domain/data-type.events';
import type { AppendResult } from '../../../core/event-store/event-store.port';
import { assertMayManageSchema, assertMaySetVisibility, RecordCaller } from '../domain/record-access.policy';
import { dataTypeClaims, slugConflict } from '../domain/record-claims';
import { RecordRow, RecordWriter } from './record-writer.service';

export interface DataTypeInput {
  name: string;
  slug: string;
  isCollection?: boolean;
  visibility?: string;
  fields: DataFieldInput[];
}

export class CreateDataTypeCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: DataTypeInput,
    readonly caller: RecordCaller,
  ) {}
}

export class UpdateDataTypeCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly changes: Partial<DataTypeInput>,
    readonly force: boolean,
    readonly caller: RecordCaller,
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeleteDataTypeCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly force: boolean,
    readonly caller: RecordCaller,
    readonly expectedRevision?: bigint,
  ) {}
}

async function recordCount(db: DataSource, dataTypeId: number): Promise<number> {
  const rows = (await db.query(`SELECT count(*)::int AS n FROM data_records WHERE data_type_id = $1`, [
    dataTypeId,
  ])) as { n: number }[];
  return rows[0].n;
}

/** POST /w/{wid}/data-types: the slug is claimed with the creation; the creator is the owner. */
@CommandHandler(CreateDataTypeCommand)
export class CreateDataTypeHandler implements ICommandHandler<CreateDataTypeCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: CreateDataTypeCommand): Promise<number> {
    const dataTypeId = await nextId(this.db, 'data_type_id_seq');
    try {
      await this.repo.handle({
        streamName: dataTypeStream(dataTypeId),
        workspaceId: cmd.workspaceId,
        decider: dataTypeDecider,
        command: {
          type: 'CreateDataType',
          dataTypeId,
          workspaceId: cmd.workspaceId,
          ...cmd.input,
          ownerMemberId: cmd.caller.memberId ?? null,
          now: new Date().toISOString(),
        },
        claims: dataTypeClaims,
      });
    } catch (err) {
      if (err instanceof ClaimTakenError) throw slugConflict(cmd.input.slug);
      throw err;
    }
    return dataTypeId;
  }
}

/** PUT: schema changes; removing or retyping a field that holds values needs `force`. */
@CommandHandler(UpdateDataTypeCommand)
export class UpdateDataTypeHandler implements ICommandHandler<UpdateDataTypeCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly waiter: ConsistencyWaiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gate: ReferenceGate,
  ) {}

  async execute(cmd: UpdateDataTypeCommand): Promise<void> {
    let outcome: HandleResult<DataTypeState, DataTypeEvent>;
    let before: DataTypeState | undefined;
    // A change of fields decides from the read models which records hold a value it would
    // drop (without force: none may; with force: the select values it narrows away go):
    // marked in the gate while it reads and appends, so a record write appended before the
    // read shows in it, and one whose check comes later waits for the change and re-reads
    // the type after it (RecordWriter.typeOnceProjected).
    const gated = <T>(decide: () => Promise<T>): Promise<T> =>
      cmd.changes.fields !== undefined
        ? this.gate.removing(dataTypeFieldsTarget(cmd.dataTypeId), decide)
        : decide();
    try {
      outcome = await gated(() =>
        this.repo.handle({
          streamName: dataTypeStream(cmd.dataTypeId),
          workspaceId: cmd.workspaceId,
          decider: dataTypeDecider,
          expectedRevision: cmd.expectedRevision,
          command: {
            from: async (state: DataTypeState) => {
              const mine = state.status === 'active' && state.workspaceId === cmd.workspaceId;
              before = state;
              if (mine) {
                assertMayManageSchema(cmd.caller, state);
                if (cmd.changes.visibility !== undefined && cmd.changes.visibility !== state.visibility)
                  assertMaySetVisibility(cmd.caller, state);
              }
              const slugs = mine ? state.fields.map((f) => f.slug) : [];
              const [holding, count, otherOptions] = mine
                ? await Promise.all([
                    this.fieldsHoldingValues(cmd.dataTypeId, slugs),
                    recordCount(this.db, cmd.dataTypeId),
                    this.fieldsHoldingOtherOptions(cmd.dataTypeId, state, cmd.changes.fields),
                  ])
                : [[], 0, []];
              return {
                type: 'UpdateDataType' as const,
                dataTypeId: cmd.dataTypeId,
                workspaceId: cmd.workspaceId,
                ...cmd.changes,
                force: cmd.force,
                fieldsHoldingValues: holding,
                fieldsHoldingOtherOptions: otherOptions,
                recordCount: count,
                now: new Date().toISOString(),
              };
            },
          },
          claims: dataTypeClaims,
        }),
      );
    } catch (err) {
      if (err instanceof ClaimTakenError) throw slugConflict(cmd.changes.slug ?? '');
      throw err;
    }
    const changed = outcome.events.find((e) => e.type === 'DataTypeUpdated')?.data;
    if (changed?.isCollection !== undefined && outcome.append && before)
      await this.confirmSwitch(cmd, before, changed, outcome.append);
  }

  /**
   * `isCollection` changes only while the type has no records, which the decision above
   * took from the read model: a record whose create committed just before this change
   * may not be there yet, and it holds no claim of one record per member (or holds one a
   * collection never releases). Once the read model has passed this change it holds every
   * such record; if there is one, the PUT is undone (what it changed set back as it was)
   * and answers the 409 it would have. A create committing after the change sees it and
   * undoes itself (RecordWriter).
   */
  private async confirmSwitch(
    cmd: UpdateDataTypeCommand,
    before: DataTypeState,
    changed: DataTypeUpdated['data'],
    append: AppendResult,
  ): Promise<void> {
    await this.waiter.waitFor([append], Math.max(this.config.readYourWritesTimeoutMs, 15_000));
    const count = await recordCount(this.db, cmd.dataTypeId);
    if (!count) return;
    // Fields come back only when the change dropped no values (nothing to restore them from).
    const lossless = ![changed.removedFields, changed.retypedFields, changed.narrowedFields].some(
      (l) => l?.length,
    );
    const undo = (whole: boolean) =>
      this.repo.handle({
        streamName: dataTypeStream(cmd.dataTypeId),
        workspaceId: cmd.workspaceId,
        decider: dataTypeDecider,
        command: {
          from: async (state: DataTypeState) => {
            const fields = whole && lossless && changed.fields !== undefined;
            return {
              type: 'UpdateDataType' as const,
              dataTypeId: cmd.dataTypeId,
              workspaceId: cmd.workspaceId,
              // Unless another change moved it back meanwhile (then nothing is decided for it).
              ...(state.isCollection === changed.isCollection ? { isCollection: before.isCollection } : {}),
              ...(changed.name !== undefined ? { name: before.name } : {}),
              ...(changed.visibility !== undefined ? { visibility: before.visibility } : {}),
              ...(whole && changed.slug !== undefined ? { slug: before.slug } : {}),
              ...(fields ? { fields: before.fields } : {}),
              // Fields it added that records have filled since stay (a 409 below, then the lesser undo).
              force: false,
              fieldsHoldingValues: fields
                ? await this.fieldsHoldingValues(
                    cmd.dataTypeId,
                    state.fields.map((f) => f.slug),
                  )
                : [],
              // The undoing of this change, not a change of the client's: the records it found are why.
              recordCount: 0,
              now: new Date().toISOString(),
            };
          },
        },
        claims: dataTypeClaims,
      });
    let whole = true;
    await undo(true).catch(async (err: unknown) => {
      // The old slug taken meanwhile, or an added field filled: undo the rest.
      if (!(err instanceof ClaimTakenError || err instanceof ConflictError)) throw err;
      whole = false;
      await undo(false);
    });
    const kept = !whole || (!lossless && changed.fields !== undefined);
    throw new ConflictError(
      `isCollection: cannot change while the type has ${count} record(s)${kept ? '; its field or slug changes stand' : ''}`,
    );
  }

  /** The type's select fields, staying select, of which some record holds a value the new options leave out. */
  private async fieldsHoldingOtherOptions(
    dataTypeId: number,
    state: DataTypeState,
    fields: readonly DataFieldInput[] | undefined,
  ): Promise<string[]> {
    if (!fields) return [];
    const selects = new Set(state.fields.filter((f) => f.fieldType === 'select').map((f) => f.slug));
    const asked = fields
      .filter((f) => f.fieldType === 'select' && selects.has(f.slug) && Array.isArray(f.options))
      .map((f) => ({ s: f.slug, o: f.options }));
    if (!asked.length) return [];
    const rows = (await this.db.query(
      `SELECT x.s FROM jsonb_to_recordset($2::jsonb) AS x(s text, o text[])
        WHERE EXISTS (SELECT 1 FROM data_records
                       WHERE data_type_id = $1 AND field_values ? x.s AND NOT (field_values->>x.s = ANY(x.o)))`,
      [dataTypeId, JSON.stringify(asked)],
    )) as { s: string }[];
    return rows.map((r) => r.s);
  }

  private async fieldsHoldingValues(dataTypeId: number, slugs: string[]): Promise<string[]> {
    if (!slugs.length) return [];
    const rows = (await this.db.query(
      `SELECT s FROM unnest($2::text[]) s
        WHERE EXISTS (SELECT 1 FROM data_records WHERE data_type_id = $1 AND field_values ? s)`,
      [dataTypeId, slugs],
    )) as { s: string }[];
    return rows.map((r) => r.s);
  }
}

/**
 * DELETE (datatypes:admin): refused while records exist, unless `force`; then every record
 * of the type gets its DataRecordDeleted too (RecordWriter.deleteAll), after the type's.
 */
@CommandHandler(DeleteDataTypeCommand)
export class DeleteDataTypeHandler implements ICommandHandler<DeleteDataTypeCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly records: RecordWriter,
    private readonly waiter: ConsistencyWaiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(cmd: DeleteDataTypeCommand): Promise<void> {
    let doomed: { type: DataTypeState; rows: RecordRow[] } | undefined;
    let deleting: DataTypeState | undefined;
    const { append } = await this.repo.handle({
      streamName: dataTypeStream(cmd.dataTypeId),
      workspaceId: cmd.workspaceId,
      decider: dataTypeDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        from: async (state: DataTypeState) => {
          if (state.status === 'active' && state.workspaceId === cmd.workspaceId)
            assertMayManageSchema(cmd.caller, state);
          // With force, the records are listed before the type goes (its projection drops their rows).
          const rows =
            cmd.force && state.status === 'active' && state.workspaceId === cmd.workspaceId
              ? await this.records.recordsOf(state)
              : undefined;
          doomed = rows?.length ? { type: state, rows } : undefined;
          deleting = state;
          return {
            type: 'DeleteDataType' as const,
            dataTypeId: cmd.dataTypeId,
            workspaceId: cmd.workspaceId,
            recordCount: rows?.length ?? (await recordCount(this.db, cmd.dataTypeId)),
            force: cmd.force,
            now: new Date().toISOString(),
          };
        },
      },
      claims: dataTypeClaims,
    });
    if (doomed) await this.records.deleteAll(doomed.type, doomed.rows);
    if (!append || !deleting) return;
    // Records whose append committed after the listing above and before the deletion (a
    // create racing this DELETE, with or without force): once the read model has passed the
    // deletion it holds every one of them (their rows outlive the type's row), and they go
    // too. A create committing after the deletion removes its own record (RecordWriter).
    await this.waiter.waitFor([append], Math.max(this.config.readYourWritesTimeoutMs, 15_000));
    const late = await this.records.recordsOf(deleting);
    if (late.length) await this.records.deleteAll(deleting, late);
  }
}
