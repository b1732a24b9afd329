import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { GetMemberContactsQuery, MemberContact } from '../../identity';
import { chatDecider, ChatState } from '../domain/chat';
import { chatStream } from '../domain/chat.events';
import { PhoneNumberEntity } from '../projections/messaging.entities';

/** Facts commands of this room look up: members (identity's query), the room's numbers, a chat's stream. */
@Injectable()
export class ChatLookup {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  contacts(workspaceId: string, memberIds: readonly number[]): Promise<MemberContact[]> {
    return this.queries.execute<GetMemberContactsQuery, MemberContact[]>(
      new GetMemberContactsQuery(workspaceId, memberIds),
    );
  }

  /** Every id is an active member of the workspace, else 400 naming the field it came from. */
  async assertActiveMembers(workspaceId: string, ids: { field: string; memberId: number }[]): Promise<void> {
    const found = await this.contacts(
      workspaceId,
      ids.map((i) => i.memberId),
    );
    for (const { field, memberId } of ids)
      if (!found.some((m) => m.id === memberId && m.status === 'active'))
        throw new ValidationError(`${field}: no active member ${memberId} in this workspace`);
  }

  async phoneNumber(workspaceId: string, phoneNumberId: number): Promise<PhoneNumberEntity | null> {
    return this.db.getRepository(PhoneNumberEntity).findOneBy({ id: phoneNumberId, workspaceId });
  }

  /** The chat as its stream tells it; 404 when absent or of another workspace. */
  async chat(
    workspaceId: string,
    chatId: number,
  ): Promise<{ state: ChatState; revision: bigint | undefined }> {
    const loaded = await this.repo.load(chatStream(chatId), chatDecider);
    if (!loaded.state.chat || loaded.state.chat.workspaceId !== workspaceId)
      throw new NotFoundError('Chat not found');
    return loaded;
  }
}
