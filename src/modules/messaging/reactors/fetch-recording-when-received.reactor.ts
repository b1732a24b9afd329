import { Injectable } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { RecordingJob } from '../commands/voice.service';
import type { CallRecordingReceived } from '../domain/chat.events';
import { VOICE_QUEUE } from '../workers/delivery-job';

/** CallRecordingReceived → one job on the `voice` queue that fetches and stores the recording. */
@Injectable()
@Reactor({ name: 'messaging-recordings', eventTypes: ['CallRecordingReceived'] })
export class FetchRecordingWhenReceivedReactor implements ReactorHandler {
  constructor(private readonly modules: ModuleRef) {}

  async react(stored: StoredEvent): Promise<void> {
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
