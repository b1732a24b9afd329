import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ValidationError } from '../../../core/http/domain-errors';
import { withVersion } from '../../../core/http/preconditions';
import { DataRecordState, normaliseExternalId } from '../domain/data-record';
import {
  assertMayCreate,
  assertMayDelete,
  assertMayEdit,
  assertTypeRecordsAccess,
  RecordCaller,
} from '../domain/record-access.policy';
import { recordClaimConflict } from '../domain/record-claims';
import type { RecordResponse } from '../http/dto/record.dto';
import { RecordWriter } from './record-writer.service';

export class CreateRecordCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly input: { memberId?: number | null; externalId?: string | null; fieldValues: unknown },
    readonly caller: RecordCaller,
  ) {}
}

/**
 * CreateRecordCommand that answers with the new record (POST .../records) rather than its
 * id: the record as decided, which is what its read-model row holds once projected
 * (version 1, `updatedAt` = `createdAt`), so the route skips reading it back. The
 * response still waits for the projections (read-your-writes), like every write's.
 */
export class CreateRecordAnsweredCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly input: { memberId?: number | null; externalId?: string | null; fieldValues: unknown },
    readonly caller: RecordCaller,
  ) {}
}

export class UpdateRecordCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly recordId: number,
    readonly fieldValues: unknown,
    readonly caller: RecordCaller,
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeleteRecordCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly recordId: number,
    readonly caller: RecordCaller,
    readonly expectedRevision?: bigint,
  ) {}
}

export class UpsertRecordCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly externalId: string,
    readonly input: { memberId?: number | null; fieldValues: unknown },
    readonly caller: RecordCaller,
  ) {}
}

export interface UpsertOutcome {
  recordId: number;
  wasCreated: boolean;
}

async function createRecord(
  records: RecordWriter,
  cmd: CreateRecordCommand | CreateRecordAnsweredCommand,
): Promise<DataRecordState> {
  const type = await records.type(cmd.workspaceId, cmd.dataTypeId);
  const memberId = cmd.input.memberId ?? null;
  assertMayCreate(cmd.caller, memberId, type.visibility);
  const externalId = normaliseExternalId(cmd.input.externalId);
  const member = await records.member(cmd.workspaceId, memberId);
  const outcome = await records.create(
    type,
    { memberId, externalId, fieldValues: cmd.input.fieldValues },
    member,
  );
  if (outcome.kind === 'taken') throw recordClaimConflict(outcome.error);
  return outcome.record;
}

/** A new record as GET answers it once projected: its first version. */
export function createdRecordResponse(record: DataRecordState): RecordResponse {
  return withVersion(
    {
      id: record.recordId,
      dataTypeId: record.dataTypeId,
      memberId: record.memberId,
      externalId: record.externalId,
      fieldValues: record.fieldValues,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    },
    1,
  );
}

@CommandHandler(CreateRecordCommand)
export class CreateRecordHandler implements ICommandHandler<CreateRecordCommand, number> {
  constructor(private readonly records: RecordWriter) {}

  async execute(cmd: CreateRecordCommand): Promise<number> {
    return (await createRecord(this.records, cmd)).recordId;
  }
}

@CommandHandler(CreateRecordAnsweredCommand)
export class CreateRecordAnsweredHandler implements ICommandHandler<
  CreateRecordAnsweredCommand,
  RecordResponse
> {
  constructor(private readonly records: RecordWriter) {}

  async execute(cmd: CreateRecordAnsweredCommand): Promise<RecordResponse> {
    return createdRecordResponse(await createRecord(this.records, cmd));
  }
}

@CommandHandler(UpdateRecordCommand)
export class UpdateRecordHandler implements ICommandHandler<UpdateRecordCommand> {
  constructor(private readonly records: RecordWriter) {}

  async execute(cmd: UpdateRecordCommand): Promise<void> {
    const type = await this.records.type(cmd.workspaceId, cmd.dataTypeId);
    assertTypeRecordsAccess(cmd.caller, type.visibility);
    const held = await this.records.heldGrants(cmd.workspaceId, cmd.caller);
    await this.records.update(
      type,
      cmd.recordId,
      cmd.fieldValues,
      (r) =>
        assertMayEdit(
          cmd.caller,
          { memberId: r.memberId, dataTypeId: type.dataTypeId, visibility: type.visibility },
          held,
        ),
      cmd.expectedRevision,
    );
  }
}

@CommandHandler(DeleteRecordCommand)
export class DeleteRecordHandler implements ICommandHandler<DeleteRecordCommand> {
  constructor(private readonly records: RecordWriter) {}

  async execute(cmd: DeleteRecordCommand): Promise<void> {
    const type = await this.records.type(cmd.workspaceId, cmd.dataTypeId);
    assertTypeRecordsAccess(cmd.caller, type.visibility);
    const held = await this.records.heldGrants(cmd.workspaceId, cmd.caller);
    await this.records.delete(
      type,
      cmd.recordId,
      (r) =>
        assertMayDelete(
          cmd.caller,
          { memberId: r.memberId, dataTypeId: type.dataTypeId, visibility: type.visibility },
          held,
        ),
      cmd.expectedRevision,
    );
  }
}

/** POST .../upsert/{externalId}: 201 with a new record, 200 with the one holding the externalId. */
@CommandHandler(UpsertRecordCommand)
export class UpsertRecordHandler implements ICommandHandler<UpsertRecordCommand, UpsertOutcome> {
  constructor(private readonly records: RecordWriter) {}

  async execute(cmd: UpsertRecordCommand): Promise<UpsertOutcome> {
    const type = await this.records.type(cmd.workspaceId, cmd.dataTypeId);
    assertTypeRecordsAccess(cmd.caller, type.visibility);
    const externalId = normaliseExternalId(cmd.externalId, 'path parameter externalId');
    if (externalId === null) throw new ValidationError('path parameter externalId: must not be empty');
    const memberId = cmd.input.memberId ?? null;
    const held = await this.records.heldGrants(cmd.workspaceId, cmd.caller);
    const { record, wasCreated } = await this.records.upsert(
      type,
      externalId,
      { memberId, fieldValues: cmd.input.fieldValues },
      cmd.caller,
      held,
      () => assertMayCreate(cmd.caller, memberId, type.visibility),
    );
    return { recordId: record.recordId, wasCreated };
  }
}
