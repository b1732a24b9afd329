import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { ChatLookup } from './commands/chat-lookup.service';
import { CreateChatHandler, UpdateChatHandler } from './commands/chat.commands';
import { CreateInboxHandler } from './commands/inbox.commands';
import { InboundMessages } from './commands/inbound.service';
import { PostUserMessageHandler, SendAssistantMessageHandler } from './commands/message.commands';
import {
  CreatePhoneNumberHandler,
  DeletePhoneNumberHandler,
  UpdatePhoneNumberHandler,
} from './commands/phone-number.commands';
import { MESSAGING_PUBLIC_EVENTS } from './domain/messaging.public-events';
import { ChatsController } from './http/chats.controller';
import { InboxesController } from './http/inboxes.controller';
import { PhoneNumbersController } from './http/phone-numbers.controller';
import { ProvidersController } from './http/providers.controller';
import { WorkspaceSendSettings } from './commands/workspace-settings.service';
import { PhoneNumberFacts } from './commands/phone-number-facts.service';
import { WebChatStreams } from './http/web-chat-streams';
import { Messaging1764000007600 } from './messaging.migration';
import { MessagingWorkflows1764000008000 } from './messaging-workflows.migration';
import { MessagingQuietHours1764000008900 } from './messaging-quiet-hours.migration';
import { ChatsProjection } from './projections/chats.projection';
import { MESSAGING_ENTITIES } from './projections/messaging.entities';
import { PhoneNumbersInboxesProjection } from './projections/phone-numbers-inboxes.projection';
import { createEmailSender, EMAIL_SENDER, EmailSender } from './providers/email-sender';
import { LogSmsProvider } from './providers/log-sms.provider';
import { SMS_PROVIDER } from './providers/sms-provider.port';
import { TwilioSmsProvider } from './providers/twilio-sms.provider';
import {
  GetChatHandler,
  GetInboxHandler,
  GetMessageHandler,
  GetPhoneNumberHandler,
  ListChatsHandler,
  ListInboxesHandler,
  ListMessagesHandler,
  ListPhoneNumbersHandler,
} from './queries/messaging.queries';
import { EnqueueDeliveriesWhenMessageSentReactor } from './reactors/enqueue-deliveries-when-message-sent.reactor';
import { EMAIL_QUEUE, SMS_QUEUE, VOICE_QUEUE, WEB_CHAT_QUEUE } from './workers/delivery-job';
import {
  EmailDeliveryProcessor,
  SmsDeliveryProcessor,
  VoiceRecordingProcessor,
  WebChatDeliveryProcessor,
} from './workers/delivery.processors';
import { FilesModule } from '../files';
import { VoiceCalls } from './commands/voice.service';
import { RecordingsController } from './http/recordings.controller';
import { FetchRecordingWhenReceivedReactor } from './reactors/fetch-recording-when-received.reactor';
import { DeliveryService } from './workers/delivery.service';

/**
 * Messaging: phone numbers and inboxes (the service's addresses), chats on four
 * channels and their messages, delivered by one BullMQ job per recipient through the
 * provider ports (SMS_PROVIDER: log or twilio; SMTP_URL), with SMS consent, keywords and
 * status callbacks. Workflows, voice calls and recordings come in a later round.
 */
@Feature({
  name: 'messaging',
  entities: MESSAGING_ENTITIES,
  migrations: [Messaging1764000007600, MessagingWorkflows1764000008000, MessagingQuietHours1764000008900],
  versionedResources: ['phone_numbers', 'chats'],
  publicEvents: MESSAGING_PUBLIC_EVENTS,
})
@Module(
  withQueues(
    {
      queues: [SMS_QUEUE, EMAIL_QUEUE, WEB_CHAT_QUEUE, VOICE_QUEUE],
      processors: [
        SmsDeliveryProcessor,
        EmailDeliveryProcessor,
        WebChatDeliveryProcessor,
        VoiceRecordingProcessor,
      ],
    },
    {
      imports: [FilesModule],
      controllers: [
        PhoneNumbersController,
        InboxesController,
        ChatsController,
        ProvidersController,
        RecordingsController,
      ],
      providers: [
        {
          provide: SMS_PROVIDER,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) =>
            config.smsProvider === 'twilio' ? new TwilioSmsProvider(config) : new LogSmsProvider(),
        },
        { provide: EMAIL_SENDER, inject: [APP_CONFIG], useFactory: createEmailSender },
        PhoneNumbersInboxesProjection,
        ChatsProjection,
        EnqueueDeliveriesWhenMessageSentReactor,
        FetchRecordingWhenReceivedReactor,
        VoiceCalls,
        ChatLookup,
        WorkspaceSendSettings,
        PhoneNumberFacts,
        WebChatStreams,
        DeliveryService,
        InboundMessages,
        CreatePhoneNumberHandler,
        UpdatePhoneNumberHandler,
        DeletePhoneNumberHandler,
        CreateInboxHandler,
        CreateChatHandler,
        UpdateChatHandler,
        PostUserMessageHandler,
        SendAssistantMessageHandler,
        ListPhoneNumbersHandler,
        GetPhoneNumberHandler,
        ListInboxesHandler,
        GetInboxHandler,
        ListChatsHandler,
        GetChatHandler,
        ListMessagesHandler,
        GetMessageHandler,
      ],
    },
  ),
)
export class MessagingModule implements OnApplicationShutdown {
  constructor(@Inject(EMAIL_SENDER) private readonly email: EmailSender) {}

  onApplicationShutdown(): void {
    this.email.close();
  }
}

declare module '../../core/features/feature' {
  interface VersionedTables {
    phone_numbers: true;
    chats: true;
  }
}
