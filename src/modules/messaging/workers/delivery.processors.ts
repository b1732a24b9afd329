import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { WORKER_METADATA } from '@nestjs/bullmq/dist/bull.constants';
import type { Job, WorkerOptions } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { PlaceCallJob, RecordingJob, VoiceCalls } from '../commands/voice.service';
import { DeliveryJob, EMAIL_QUEUE, SMS_QUEUE, VOICE_QUEUE, WEB_CHAT_QUEUE } from './delivery-job';
import { DeliveryOutcome, DeliveryService } from './delivery.service';

/**
 * Runs a delivery in a context carrying its cause's correlation id, as the system;
 * MESSAGE_DELIVERY_CONCURRENCY at a time (deliveries of different chats touch different
 * streams; two of one chat are serialised by the stream's revision check and retried).
 */
abstract class DeliveryProcessor extends WorkerHost {
  constructor(
    private readonly deliveries: DeliveryService,
    config: AppConfig,
  ) {
    super();
    // @nestjs/bullmq reads worker options only from the @Processor metadata, after this
    // instance exists: the queues module instantiates a per-application subclass
    // (new.target), so setting it there is local (as the webhook processor does).
    const options = (Reflect.getMetadata(WORKER_METADATA, new.target) ?? {}) as WorkerOptions;
    Reflect.defineMetadata(
      WORKER_METADATA,
      { ...options, concurrency: config.messageDeliveryConcurrency },
      new.target,
    );
  }

  process(job: Job<DeliveryJob>): Promise<DeliveryOutcome> {
    const ctx = {
      requestId: job.data.correlationId,
      causationId: job.data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, () => this.deliveries.deliver(job.data, job.queueName));
  }
}

@Processor(SMS_QUEUE)
export class SmsDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService, @Inject(APP_CONFIG) config: AppConfig) {
    super(deliveries, config);
  }
}

@Processor(EMAIL_QUEUE)
export class EmailDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService, @Inject(APP_CONFIG) config: AppConfig) {
    super(deliveries, config);
  }
}

@Processor(WEB_CHAT_QUEUE)
export class WebChatDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService, @Inject(APP_CONFIG) config: AppConfig) {
    super(deliveries, config);
  }
}

/** Places outbound calls, and fetches a call's recording from the provider to the file storage port (BLOB_STORAGE). */
@Processor(VOICE_QUEUE)
export class VoiceRecordingProcessor extends WorkerHost {
  constructor(
    private readonly calls: VoiceCalls,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    // As the delivery processors: one slow recording download does not hold the
    // queue's calls (each job re-checks its chat's stream, so they may overlap).
    const options = (Reflect.getMetadata(WORKER_METADATA, new.target) ?? {}) as WorkerOptions;
    Reflect.defineMetadata(
      WORKER_METADATA,
      { ...options, concurrency: config.messageDeliveryConcurrency },
      new.target,
    );
  }

  process(job: Job<RecordingJob | PlaceCallJob>): Promise<string> {
    const ctx = {
      requestId: job.data.correlationId,
      causationId: job.data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, () =>
      job.name === 'place-call'
        ? this.calls.placeCall(job.data)
        : this.calls.fetchRecording(job.data as RecordingJob),
    );
  }
}
