import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { LanguageModelModule } from './model/language-model.module';
import { ReplyWhenUserMessageReactor } from './reactors/reply-when-user-message.reactor';
import { ReplyService } from './replies/reply.service';
import { ToolBox } from './replies/tool-box';
import { ASSISTANT_QUEUE } from './workers/reply-job';
import { ReplyProcessor } from './workers/reply.processor';

/**
 * The assistant of `ai` chats: a member's message starts one reply job per burst, which
 * runs the language model (ASSISTANT_PROVIDER) with the workspace's tools and sends the
 * answer through messaging. Its events (`assistant-chat-<id>`): AssistantToolCalled,
 * AssistantReplied, AssistantReplyFailed.
 */
@Feature({ name: 'assistant' })
@Module(
  withQueues(
    { queues: [ASSISTANT_QUEUE], processors: [ReplyProcessor] },
    {
      imports: [LanguageModelModule],
      providers: [ReplyWhenUserMessageReactor, ReplyService, ToolBox],
    },
  ),
)
export class AssistantModule {}
