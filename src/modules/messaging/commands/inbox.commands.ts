import { CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ConflictError, ValidationError } from '../../../core/http/domain-errors';
import { GetMemberContactsQuery, MemberContact } from '../../identity';
import { inboxClaims, inboxDecider, inboxStream } from '../domain/inbox';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class CreateInboxCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: {
      email: string;
      name?: string | null;
      ownerMemberId: number | null;
      memberIds?: number[];
    },
  ) {}
}

/** Creates an inbox; its address is claimed service-wide with the append (409 when held). */
@CommandHandler(CreateInboxCommand)
export class CreateInboxHandler implements ICommandHandler<CreateInboxCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(cmd: CreateInboxCommand): Promise<number> {
    const email = cmd.input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new ValidationError('email: must be an email address');
    const requested = cmd.input.memberIds ?? [];
    const granted = [...new Set(requested)];
    const people = [...granted, ...(cmd.input.ownerMemberId !== null ? [cmd.input.ownerMemberId] : [])];
    const found = await this.queries.execute<GetMemberContactsQuery, MemberContact[]>(
      new GetMemberContactsQuery(cmd.workspaceId, people),
    );
    // Named by its place in the request (a repeated id does not shift the ones after it).
    requested.forEach((id, i) => {
      if (!found.some((m) => m.id === id && m.status === 'active'))
        throw new ValidationError(`memberIds.${i}: no active member ${id} in this workspace`);
    });
    const inboxId = await nextId(this.db, 'inbox_id_seq');
    try {
      await this.repo.handle({
        streamName: inboxStream(inboxId),
        workspaceId: cmd.workspaceId,
        decider: inboxDecider,
        command: {
          type: 'CreateInbox',
          inbox: {
            inboxId,
            workspaceId: cmd.workspaceId,
            email,
            name: cmd.input.name?.trim() || null,
            ownerMemberId: cmd.input.ownerMemberId,
            grantedMemberIds: granted,
          },
          now: new Date().toISOString(),
        },
        claims: inboxClaims,
      });
    } catch (err) {
      if (err instanceof ClaimTakenError)
        throw new ConflictError(`email: ${email} is already an inbox in this service`);
      throw err;
    }
    return inboxId;
  }
}
