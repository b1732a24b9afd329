import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { LanguageModelModule } from '../assistant';
import { SUMMARIES_PUBLIC_EVENTS } from './domain/summaries.public-events';
import { SummariesController } from './http/summaries.controller';
import { ChatSummariesProjection } from './projections/chat-summaries.projection';
import { SUMMARIES_ENTITIES } from './projections/summaries.entities';
import { SummarySourcesProjection } from './projections/summary-sources.projection';
import { GetChatSummaryHandler } from './queries/get-chat-summary.query';
import { ScheduleSummariesReactor } from './reactors/schedule-summaries.reactor';
import { Summaries1764000008800 } from './summaries.migration';
import { SummariesIdleSweep1764000010800 } from './summaries-idle-sweep.migration';
import { IdleSummarySweep } from './workers/idle-summary-sweep';
import { SUMMARIES_QUEUE } from './workers/summary-job';
import { SummaryProcessor } from './workers/summary.processor';
import { SummaryWriter } from './workers/summary-writer.service';

/**
 * Summaries of chats and calls (chat:summary, call:summary): written when a chat goes
 * quiet for CHAT_SUMMARY_IDLE_MINUTES, is paused, or its assignment completes, and after
 * a call ends; by the language model (ASSISTANT_PROVIDER=openai) or as a plain digest.
 * Reads chats through messaging's queries and keeps its own read models of what it needs
 * from messaging's and work's events.
 */
@Feature({
  name: 'summaries',
  entities: SUMMARIES_ENTITIES,
  migrations: [Summaries1764000008800, SummariesIdleSweep1764000010800],
  publicEvents: SUMMARIES_PUBLIC_EVENTS,
})
@Module(
  withQueues(
    { queues: [SUMMARIES_QUEUE], processors: [SummaryProcessor] },
    {
      imports: [LanguageModelModule],
      controllers: [SummariesController],
      providers: [
        SummarySourcesProjection,
        ChatSummariesProjection,
        ScheduleSummariesReactor,
        IdleSummarySweep,
        SummaryWriter,
        GetChatSummaryHandler,
      ],
    },
  ),
)
export class SummariesModule {}
