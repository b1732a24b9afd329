import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { CLAIM_FENCED } from '../../../core/claims/claims';
import { CachedLoader, EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { GetMemberContactsQuery, MemberContact } from '../../identity';
import { AssignmentEvent, assignmentStream, WorkflowEvent, workflowStream } from '../../work';
import { chatDecider, ChatState } from '../domain/chat';
import { ChatEvent, chatStream } from '../domain/chat.events';
import { PhoneNumberEntity } from '../projections/messaging.entities';

/** A workflow as a chat needs it, folded from work's stream (its events are work's public types). */
export interface ChatWorkflow {
  workspaceId: string | null;
  live: boolean;
  defaultPhoneNumberId: number | null;
}

function evolveWorkflow(state: ChatWorkflow, event: WorkflowEvent): ChatWorkflow {
  switch (event.type) {
    case 'WorkflowCreated':
      return {
        workspaceId: event.data.workspaceId,
        live: true,
        defaultPhoneNumberId: event.data.defaultPhoneNumberId,
      };
    case 'WorkflowUpdated':
      return event.data.changes.defaultPhoneNumberId !== undefined
        ? { ...state, defaultPhoneNumberId: event.data.changes.defaultPhoneNumberId }
        : state;
    case 'WorkflowDeleted':
      return { ...state, live: false };
    default:
      // Work may add event types: what this fold does not know changes nothing it reads.
      return state;
  }
}

export interface ChatAssignment {
  workspaceId: string;
  workflowId: number;
  memberId: number;
}

function evolveAssignment(state: ChatAssignment | null, event: AssignmentEvent): ChatAssignment | null {
  const a = (event.data as { assignment?: AssignmentEvent['data']['assignment'] }).assignment;
  return a ? { workspaceId: a.workspaceId, workflowId: a.workflowId, memberId: a.memberId } : state;
}

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

  /** The workflow of the workspace (undefined: none, or deleted). */
  async workflow(workspaceId: string, workflowId: number): Promise<ChatWorkflow | undefined> {
    const { state } = await this.repo.load(workflowStream(workflowId), {
      initialState: (): ChatWorkflow => ({ workspaceId: null, live: false, defaultPhoneNumberId: null }),
      evolve: evolveWorkflow,
    });
    return state.live && state.workspaceId === workspaceId ? state : undefined;
  }

  /** The assignment as its stream shows it (null: none). */
  async assignment(assignmentId: number): Promise<ChatAssignment | null> {
    const { state } = await this.repo.load(assignmentStream(assignmentId), {
      initialState: (): ChatAssignment | null => null,
      evolve: evolveAssignment,
    });
    return state;
  }

  /**
   * The chat as its stream tells it; 404 when absent or of another workspace. Through
   * `loader` (in `cachedFirst`), the state this process last read or wrote, when it holds
   * one (`cached`): the command's append then confirms it by its revision check, and
   * `cachedFirst` runs the whole command again on the stream as stored should it fail.
   */
  async chat(
    workspaceId: string,
    chatId: number,
    loader?: CachedLoader,
  ): Promise<{ state: ChatState; revision: bigint | undefined; cached?: boolean }> {
    const loaded = loader
      ? await loader.load(chatStream(chatId), chatDecider)
      : await this.repo.load(chatStream(chatId), chatDecider);
    if (!loaded.state.chat || loaded.state.chat.workspaceId !== workspaceId)
      throw new NotFoundError('Chat not found');
    return loaded;
  }

  /** The chat as the events of its stream just read tell it; 404 as `chat`. */
  chatAsRead(
    workspaceId: string,
    events: readonly StoredEvent[],
  ): { state: ChatState; revision: bigint | undefined } {
    let state = chatDecider.initialState();
    // A claim takeover's fence (core/claims) moves the revision but is no event of the chat.
    for (const e of events)
      if (e.type !== CLAIM_FENCED)
        state = chatDecider.evolve(state, { type: e.type, data: e.data } as ChatEvent);
    if (!state.chat || state.chat.workspaceId !== workspaceId) throw new NotFoundError('Chat not found');
    return { state, revision: events.at(-1)?.revision };
  }

  /**
   * Runs a load-decide-append command of a chat first on the chat as this process last
   * read or wrote it, and again on the stored stream should that state prove stale or
   * anything fail on it (EventSourcedRepository.cachedFirst). The command appends once,
   * as its last step.
   */
  cachedFirst<T>(command: (loader: CachedLoader) => Promise<T>): Promise<T> {
    return this.repo.cachedFirst(command);
  }

  /** A chat's state as just written, kept for `cachedFirst` (its first message reads no stream). */
  remember(chatId: number, state: ChatState, revision: bigint): void {
    this.repo.remember(chatStream(chatId), chatDecider, state, revision);
  }
}
