import { Inject, Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { NotFoundError } from '../../../core/http/domain-errors';
import { BLOB_STORAGE, BlobStorage } from '../../files';
import { chatDecider } from '../domain/chat';
import { chatStream } from '../domain/chat.events';
import { CallProvider, SMS_PROVIDER, SmsProvider } from '../providers/sms-provider.port';
import { TWILIO_API } from '../providers/twilio-http-client';
import { ChatLookup } from './chat-lookup.service';

/** The outbound call of a chat created with `placeCall`. */
export interface PlaceCallJob {
  workspaceId: string;
  chatId: number;
  correlationId: string;
  causationId: string;
}

export interface RecordingJob {
  workspaceId: string;
  chatId: number;
  recordingSid: string;
  correlationId: string;
  causationId: string;
}

/**
 * Voice calls as the provider reports them (status and recording callbacks, each applied
 * once whatever their order), and the recording's bytes fetched from the provider and
 * kept through the files feature's storage port.
 */
@Injectable()
export class VoiceCalls {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(BLOB_STORAGE) private readonly blobs: BlobStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SMS_PROVIDER) private readonly provider: SmsProvider & Partial<CallProvider>,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
  ) {}

  /**
   * A call's transcript becomes a message of the chat, from its member (source `voice`),
   * recorded once per transcription sid however often the provider posts it.
   */
  async transcript(input: { chatId: number; transcriptionSid: string; text: string }): Promise<void> {
    const loaded = await this.repo.load(chatStream(input.chatId), chatDecider);
    const chat = loaded.state.chat;
    if (!chat) throw new NotFoundError('Chat not found');
    if (Object.hasOwn(loaded.state.received, input.transcriptionSid)) return;
    const messageId = await nextId(this.db, 'chat_message_id_seq');
    await this.repo.handle({
      streamName: chatStream(input.chatId),
      workspaceId: chat.workspaceId,
      decider: chatDecider,
      loaded,
      command: {
        type: 'ReceiveMessage',
        workspaceId: chat.workspaceId,
        message: {
          messageId,
          memberId: chat.memberId,
          content: input.text,
          source: 'voice',
          providerMessageId: input.transcriptionSid,
        },
        now: new Date().toISOString(),
      },
    });
  }

  /**
   * Places the chat's outbound call to its member from the chat's number, once: a call
   * already recorded as placed is not placed again (a retried job stops). Without a phone
   * or a number the call is not placed (logged by the job's failure).
   */
  async placeCall(job: PlaceCallJob): Promise<'placed' | 'already'> {
    const { state } = await this.repo.load(chatStream(job.chatId), chatDecider);
    const chat = state.chat;
    if (!chat || !chat.placeCall || state.voice.placedSid) return 'already';
    if (!this.provider.placeCall) throw new Error('the configured provider places no calls');
    const [member] = await this.lookup.contacts(job.workspaceId, [chat.memberId]);
    const number =
      chat.phoneNumberId === null ? null : await this.lookup.phoneNumber(job.workspaceId, chat.phoneNumberId);
    if (!member?.phone || !number)
      throw new Error('no_address: the member has no phone or the chat no number');
    const base = `${this.config.publicBaseUrl.replace(/\/+$/, '')}/providers/twilio/voice`;
    const { callSid } = await this.provider.placeCall({
      to: member.phone,
      from: number.number,
      statusCallback: `${base}/status?chatId=${chat.chatId}`,
      recordingStatusCallback: `${base}/recording?chatId=${chat.chatId}`,
    });
    await this.repo.handle({
      streamName: chatStream(job.chatId),
      workspaceId: job.workspaceId,
      decider: chatDecider,
      command: {
        type: 'RecordCallPlaced',
        workspaceId: job.workspaceId,
        callSid,
        to: member.phone,
        now: new Date().toISOString(),
      },
    });
    return 'placed';
  }

  private async workspaceOf(chatId: number): Promise<string> {
    const { state } = await this.repo.load(chatStream(chatId), chatDecider);
    if (!state.chat) throw new NotFoundError('Chat not found');
    return state.chat.workspaceId;
  }

  async status(input: { chatId: number; callSid: string; status: string; duration: number }): Promise<void> {
    const workspaceId = await this.workspaceOf(input.chatId);
    await this.repo.handle({
      streamName: chatStream(input.chatId),
      workspaceId,
      decider: chatDecider,
      command: {
        type: 'RecordCallStatus',
        workspaceId,
        callSid: input.callSid,
        status: input.status,
        durationSeconds: input.duration,
        now: new Date().toISOString(),
      },
    });
  }

  async recording(input: {
    chatId: number;
    callSid: string;
    recordingSid: string;
    recordingUrl: string;
  }): Promise<void> {
    const workspaceId = await this.workspaceOf(input.chatId);
    await this.repo.handle({
      streamName: chatStream(input.chatId),
      workspaceId,
      decider: chatDecider,
      command: { type: 'RecordCallRecording', workspaceId, ...input, now: new Date().toISOString() },
    });
  }

  /**
   * Fetches the announced recording and stores it; a retried job finds it stored and stops.
   * The account's credentials (Basic auth, as Twilio's media URLs take) go only to the
   * provider's API origin (TWILIO_API_BASE_URL's, else api.twilio.com): the callback is
   * signed, but the URL it names is the provider's data, and a URL elsewhere (another
   * host, or plain http) is fetched without them, as a public media URL is. A redirect to
   * another origin drops them too (fetch removes Authorization across origins).
   */
  async fetchRecording(job: RecordingJob): Promise<'stored' | 'already'> {
    const { state } = await this.repo.load(chatStream(job.chatId), chatDecider);
    const recordings = state.voice.recordings;
    const announced = Object.hasOwn(recordings, job.recordingSid) ? recordings[job.recordingSid] : undefined;
    if (!state.chat || !announced || announced.stored) return 'already';
    const received = await this.recordingUrlOf(job);
    const headers: Record<string, string> = {};
    if (this.config.twilioAccountSid && this.config.twilioAuthToken && this.isProviderApi(received))
      headers.authorization = `Basic ${Buffer.from(`${this.config.twilioAccountSid}:${this.config.twilioAuthToken}`).toString('base64')}`;
    // Bounded: the voice queue's worker would otherwise hang on a host that never answers.
    const res = await fetch(received, {
      headers,
      redirect: 'follow',
      signal: AbortSignal.timeout(this.config.recordingFetchTimeoutMs),
    });
    if (!res.ok || !res.body) throw new Error(`recording fetch: HTTP ${res.status}`);
    const staging = await this.blobs.stage(Readable.fromWeb(res.body as unknown as WebReadableStream));
    const key = `recordings/${job.workspaceId}/${job.chatId}/${job.recordingSid}.wav`;
    await this.blobs.commit(staging, key);
    const stored = await this.blobs.open(key);
    stored?.stream.destroy();
    await this.repo.handle({
      streamName: chatStream(job.chatId),
      workspaceId: job.workspaceId,
      decider: chatDecider,
      command: {
        type: 'StoreCallRecording',
        workspaceId: job.workspaceId,
        recordingSid: job.recordingSid,
        key,
        bytes: stored?.size ?? 0,
        now: new Date().toISOString(),
      },
    });
    return 'stored';
  }

  /** Whether `url` is on the provider's API origin (scheme, host and port), where its credentials belong. */
  private isProviderApi(url: string): boolean {
    try {
      return new URL(url).origin === new URL(this.config.twilioApiBaseUrl || TWILIO_API).origin;
    } catch {
      return false;
    }
  }

  /** The media URL as the callback gave it: a WAV unless it names another format. */
  private async recordingUrlOf(job: RecordingJob): Promise<string> {
    const events = await this.repo.load(chatStream(job.chatId), {
      initialState: (): string | null => null,
      evolve: (url: string | null, e: { type: string; data: unknown }) => {
        const d = e.data as { recordingSid?: string; recordingUrl?: string };
        return e.type === 'CallRecordingReceived' && d.recordingSid === job.recordingSid
          ? (d.recordingUrl ?? url)
          : url;
      },
    });
    if (!events.state) throw new Error('recording not announced');
    return /\.(wav|mp3)$/i.test(events.state) ? events.state : `${events.state}.wav`;
  }
}
