import { Injectable } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { PlaceCallJob, RecordingJob } from '../commands/voice.service';
import type { CallRecordingReceived, ChatCreated } from '../domain/chat.events';
import { VOICE_QUEUE } from '../workers/delivery-job';

/**
 * The `voice` queue's work: ChatCreated with `placeCall` → a job that places the outbound
 * call; CallRecordingReceived → a job that fetches and stores the recording. Job ids from
 * the events, so a replay enqueues nothing twice.
 */
@Injectable()
@Reactor({ name: 'messaging-recordings', eventTypes: ['CallRecordingReceived', 'ChatCreated'] })
export class FetchRecordingWhenReceivedReactor implements ReactorHandler {
  constructor(private readonly modules: ModuleRef) {}

  async react(stored: StoredEvent): Promise<void> {
    if (stored.type === 'ChatCreated') {
      const created = stored as unknown as StoredEvent<'ChatCreated', ChatCreated['data']>;
      if (!created.data.placeCall) return;
      const calls = this.modules.get<Queue<PlaceCallJob>>(getQueueToken(VOICE_QUEUE), { strict: false });
      await calls.add(
        'place-call',
        {
          workspaceId: created.data.workspaceId,
          chatId: created.data.chatId,
          correlationId: stored.metadata.correlationId,
          causationId: stored.id,
        },
        { jobId: jobIdFor(stored), attempts: 3, backoff: { type: 'exponential', delay: 1000 } },
      );
      return;
    }
    const event = stored as unknown as StoredEvent<'CallRecordingReceived', CallRecordingReceived['data']>;
    const queue = this.modules.get<Queue<RecordingJob>>(getQueueToken(VOICE_QUEUE), { strict: false });
    await queue.add(
      'fetch-recording',
      {
        workspaceId: event.data.workspaceId,
        chatId: event.data.chatId,
        recordingSid: event.data.recordingSid,
        correlationId: stored.metadata.correlationId,
        causationId: stored.id,
      },
      { jobId: jobIdFor(stored), attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
    );
  }
}
