import { CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ConflictError } from '../../../core/http/domain-errors';
import { phoneNumberOf } from '../../../core/text/phone-number';
import { ResolveDefaultMemberRoleQuery } from '../../roles';
import {
  PhoneNumberFields,
  phoneNumberClaims,
  phoneNumberDecider,
  phoneNumberStream,
} from '../domain/phone-number';

/** E.164 (core's phoneNumberOf); international form only (the service has no default country), the whole text the number. */
export function normaliseNumber(raw: string, field = 'number'): string {
  return phoneNumberOf(raw, field);
}

function taken(number: string): ConflictError {
  return new ConflictError(`number: ${number} is already registered in this service`);
}

export class CreatePhoneNumberCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: { number: string; name?: string | null; signupRoleId?: number | null },
    /** The caller's effective scopes: the signup role cannot grant more. */
    readonly granter: readonly string[],
  ) {}
}

export class UpdatePhoneNumberCommand {
  constructor(
    readonly workspaceId: string,
    readonly phoneNumberId: number,
    readonly input: { number?: string; name?: string | null; signupRoleId?: number | null },
    readonly granter: readonly string[],
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeletePhoneNumberCommand {
  constructor(
    readonly workspaceId: string,
    readonly phoneNumberId: number,
    readonly expectedRevision?: bigint,
  ) {}
}

/**
 * A number's signup role is handed to whoever signs up through it, like the workspace
 * default: a role of this workspace that may be a default, which the caller fully holds
 * (roles' own check: 400 naming the field, 403 on escalation).
 */
async function checkSignupRole(
  queries: QueryBus,
  workspaceId: string,
  roleId: number | null | undefined,
  granter: readonly string[],
): Promise<void> {
  if (roleId === undefined || roleId === null) return;
  await queries.execute(new ResolveDefaultMemberRoleQuery(workspaceId, roleId, 'signupRoleId', granter));
}

@CommandHandler(CreatePhoneNumberCommand)
export class CreatePhoneNumberHandler implements ICommandHandler<CreatePhoneNumberCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(cmd: CreatePhoneNumberCommand): Promise<number> {
    const fields: PhoneNumberFields = {
      number: normaliseNumber(cmd.input.number),
      name: cmd.input.name?.trim() || null,
      signupRoleId: cmd.input.signupRoleId ?? null,
    };
    await checkSignupRole(this.queries, cmd.workspaceId, fields.signupRoleId, cmd.granter);
    const phoneNumberId = await nextId(this.db, 'phone_number_id_seq');
    try {
      await this.repo.handle({
        streamName: phoneNumberStream(phoneNumberId),
        workspaceId: cmd.workspaceId,
        decider: phoneNumberDecider,
        command: {
          type: 'CreatePhoneNumber',
          phoneNumberId,
          workspaceId: cmd.workspaceId,
          fields,
          now: new Date().toISOString(),
        },
        claims: phoneNumberClaims,
      });
    } catch (err) {
      if (err instanceof ClaimTakenError) throw taken(fields.number);
      throw err;
    }
    return phoneNumberId;
  }
}

@CommandHandler(UpdatePhoneNumberCommand)
export class UpdatePhoneNumberHandler implements ICommandHandler<UpdatePhoneNumberCommand, void> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
  ) {}

  async execute(cmd: UpdatePhoneNumberCommand): Promise<void> {
    const changes: Partial<PhoneNumberFields> = {};
    if (cmd.input.number !== undefined) changes.number = normaliseNumber(cmd.input.number);
    if (cmd.input.name !== undefined) changes.name = cmd.input.name?.trim() || null;
    if (cmd.input.signupRoleId !== undefined) changes.signupRoleId = cmd.input.signupRoleId;
    await checkSignupRole(this.queries, cmd.workspaceId, changes.signupRoleId, cmd.granter);
    try {
      await this.repo.handle({
        streamName: phoneNumberStream(cmd.phoneNumberId),
        workspaceId: cmd.workspaceId,
        decider: phoneNumberDecider,
        expectedRevision: cmd.expectedRevision,
        command: {
          type: 'UpdatePhoneNumber',
          phoneNumberId: cmd.phoneNumberId,
          workspaceId: cmd.workspaceId,
          changes,
          now: new Date().toISOString(),
        },
        claims: phoneNumberClaims,
      });
    } catch (err) {
      if (err instanceof ClaimTakenError) throw taken(changes.number ?? '');
      throw err;
    }
  }
}

@CommandHandler(DeletePhoneNumberCommand)
export class DeletePhoneNumberHandler implements ICommandHandler<DeletePhoneNumberCommand, void> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: DeletePhoneNumberCommand): Promise<void> {
    await this.repo.handle({
      streamName: phoneNumberStream(cmd.phoneNumberId),
      workspaceId: cmd.workspaceId,
      decider: phoneNumberDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'DeletePhoneNumber',
        phoneNumberId: cmd.phoneNumberId,
        workspaceId: cmd.workspaceId,
        now: new Date().toISOString(),
      },
      claims: phoneNumberClaims,
    });
  }
}
