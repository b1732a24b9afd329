import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { NotFoundError } from '../../../core/http/domain-errors';
import { assertMayGrant, assertMayRevoke, RecordCaller, seesDataType } from '../domain/record-access.policy';
import {
  grantConflict,
  recordGrantClaims,
  recordGrantDecider,
  RecordGrantState,
  recordGrantStream,
} from '../domain/record-grant';
import { RecordWriter } from './record-writer.service';

export interface RecordGrantInput {
  granteeMemberId: number;
  ownerMemberId: number;
  access: string;
  dataTypeId?: number | null;
}

export class CreateRecordGrantCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: RecordGrantInput,
    readonly caller: RecordCaller,
  ) {}
}

export class RevokeRecordGrantCommand {
  constructor(
    readonly workspaceId: string,
    readonly grantId: number,
    readonly caller: RecordCaller,
  ) {}
}

/** POST /w/{wid}/record-grants: records:admin, or a member sharing its own records. */
@CommandHandler(CreateRecordGrantCommand)
export class CreateRecordGrantHandler implements ICommandHandler<CreateRecordGrantCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly records: RecordWriter,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: CreateRecordGrantCommand): Promise<number> {
    const { input, workspaceId } = cmd;
    assertMayGrant(cmd.caller, input.ownerMemberId, input.access);
    const dataTypeId = input.dataTypeId ?? null;
    const [members, dataTypeExists] = await Promise.all([
      this.records.members(workspaceId, [input.granteeMemberId, input.ownerMemberId]),
      dataTypeId === null
        ? Promise.resolve(false)
        : this.records.type(workspaceId, dataTypeId).then(
            // A type the caller does not see is, to it, no type at all (seesDataType).
            (type) => seesDataType(cmd.caller, type.visibility),
            (err: unknown) => {
              if (err instanceof NotFoundError) return false;
              throw err;
            },
          ),
    ]);
    const grantId = await nextId(this.db, 'record_grant_id_seq');
    try {
      await this.repo.handle({
        streamName: recordGrantStream(grantId),
        workspaceId,
        decider: recordGrantDecider,
        command: {
          type: 'CreateRecordGrant',
          grantId,
          workspaceId,
          granteeMemberId: input.granteeMemberId,
          ownerMemberId: input.ownerMemberId,
          access: input.access,
          dataTypeId,
          granteeExists: members.has(input.granteeMemberId),
          ownerExists: members.has(input.ownerMemberId),
          dataTypeExists,
          grantedBy: cmd.caller.memberId ?? null,
          now: new Date().toISOString(),
        },
        claims: recordGrantClaims,
      });
    } catch (err) {
      if (err instanceof ClaimTakenError) throw grantConflict();
      throw err;
    }
    return grantId;
  }
}

/** DELETE /w/{wid}/record-grants/{id}: records:admin, the owner, or the grantee giving it up. */
@CommandHandler(RevokeRecordGrantCommand)
export class RevokeRecordGrantHandler implements ICommandHandler<RevokeRecordGrantCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: RevokeRecordGrantCommand): Promise<void> {
    await this.repo.handle({
      streamName: recordGrantStream(cmd.grantId),
      workspaceId: cmd.workspaceId,
      decider: recordGrantDecider,
      command: {
        from: (state: RecordGrantState) => {
          if (state.status === 'active' && state.grant!.workspaceId === cmd.workspaceId)
            assertMayRevoke(cmd.caller, state.grant!);
          return {
            type: 'RevokeRecordGrant' as const,
            workspaceId: cmd.workspaceId,
            now: new Date().toISOString(),
          };
        },
      },
      claims: recordGrantClaims,
    });
  }
}
