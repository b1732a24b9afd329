import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { PlaceCallJob, RecordingJob, VoiceCalls } from '../commands/voice.service';
import { DeliveryJob, EMAIL_QUEUE, SMS_QUEUE, VOICE_QUEUE, WEB_CHAT_QUEUE } from './delivery-job';
import { DeliveryOutcome, DeliveryService } from './delivery.service';

/** Runs a delivery in a context carrying its cause's correlation id, as the system. */
abstract class DeliveryProcessor extends WorkerHost {
  constructor(private readonly deliveries: DeliveryService) {
    super();
  }

  process(job: Job<DeliveryJob>): Promise<DeliveryOutcome> {
    const ctx = {
      requestId: job.data.correlationId,
      causationId: job.data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, () => this.deliveries.deliver(job.data));
  }
}

@Processor(SMS_QUEUE)
export class SmsDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService) {
    super(deliveries);
  }
}

@Processor(EMAIL_QUEUE)
export class EmailDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService) {
    super(deliveries);
  }
}

@Processor(WEB_CHAT_QUEUE)
export class WebChatDeliveryProcessor extends DeliveryProcessor {
  constructor(deliveries: DeliveryService) {
    super(deliveries);
  }
}

/** Places outbound calls, and fetches a call's recording from the provider to the file storage port (BLOB_STORAGE). */
@Processor(VOICE_QUEUE)
export class VoiceRecordingProcessor extends WorkerHost {
  constructor(private readonly calls: VoiceCalls) {
    super();
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
