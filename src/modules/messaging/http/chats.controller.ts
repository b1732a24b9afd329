import { Body, Controller, Get, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import { bearerToken } from '../../../core/auth/auth.guard';
import {
  CREDENTIAL_RESOLVER,
  CredentialResolver,
  MEMBERSHIP_RESOLVER,
  MembershipResolver,
  Principal,
} from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest, PageQueryDto } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { CreateChatCommand, UpdateChatCommand } from '../commands/chat.commands';
import { PostUserMessageCommand, SendAssistantMessageCommand } from '../commands/message.commands';
import {
  GetChatQuery,
  GetMessageQuery,
  ListChatsQuery,
  ListMessagesQuery,
} from '../queries/messaging.queries';
import { ChatListResponse, ChatResponse, MessageListResponse, MessageResponse } from './chat.responses';
import { callerOf, pathId } from './ids';
import { WebChatStreams } from './web-chat-streams';
import {
  ChatListQueryDto,
  CreateChatDto,
  PostMessageDto,
  SendAssistantMessageDto,
  UpdateChatDto,
} from './messaging.dto';

const messageLocation = (r: MessageResponse, p: Record<string, string>) =>
  `/w/${seg(p.wid.toLowerCase())}/chats/${seg(r.chatId)}/messages/${seg(r.id)}`;

/**
 * Chats and their messages. Every route takes its scope or self-access (a member in
 * its own chats); which chat a caller may see or write is the policy
 * (domain/messaging-access.policy.ts), applied by the handlers.
 */
@ApiTags('chats')
@Controller('w/:wid/chats')
export class ChatsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
    private readonly streams: WebChatStreams,
    private readonly modules: ModuleRef,
  ) {}

  @Get()
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiOkResponse({
    type: ChatListResponse,
    description: 'without chats:read: the chats the caller takes part in',
  })
  list(
    @Param('wid') wid: string,
    @Query() query: ChatListQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ChatListResponse> {
    const { channel, memberId, workflowId, paused, needsResponse } = query;
    return this.queries.execute(
      new ListChatsQuery(
        wid.toLowerCase(),
        { channel, memberId, workflowId, paused, needsResponse },
        callerOf(principal),
        toPageRequest(query),
      ),
    );
  }

  @Post()
  @RequireScope('chats:write')
  @SelfAccess()
  @CreatedLocation<ChatResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/chats/${seg(r.id)}`)
  @ApiCreatedResponse({
    type: ChatResponse,
    description:
      'a chat of ones own needs no scope; `assistantEnabled` is answered with a Deprecation header',
  })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateChatDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatResponse> {
    const workspaceId = wid.toLowerCase();
    const input = body;
    const caller = callerOf(principal);
    const chatId = await this.commands.execute<CreateChatCommand, number>(
      new CreateChatCommand(workspaceId, input, caller),
    );
    // RFC 9745's header: the field still works, clients should move to assistantKind.
    if (body.assistantEnabled !== undefined) reply.header('Deprecation', 'true');
    return this.queries.execute(new GetChatQuery(workspaceId, chatId, caller));
  }

  @Get(':chatId')
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiOkResponse({ type: ChatResponse })
  get(
    @Param('wid') wid: string,
    @Param('chatId') chatId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ChatResponse> {
    return this.queries.execute(
      new GetChatQuery(wid.toLowerCase(), pathId(chatId, 'Chat'), callerOf(principal)),
    );
  }

  @Put(':chatId')
  @RequireScope('chats:write')
  @SelfAccess()
  @ConditionalWrite()
  @ApiOkResponse({ type: ChatResponse })
  async update(
    @Param('wid') wid: string,
    @Param('chatId') rawId: string,
    @Body() body: UpdateChatDto,
    @CurrentPrincipal() principal: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<ChatResponse> {
    const workspaceId = wid.toLowerCase();
    const chatId = pathId(rawId, 'Chat');
    const expected = await pinnedRevision(this.db, ifMatch, {
      table: 'chats',
      id: chatId,
      workspaceId,
      notFound: () => new NotFoundError('Chat not found'),
    });
    const caller = callerOf(principal);
    await this.commands.execute(
      new UpdateChatCommand(
        workspaceId,
        chatId,
        { title: body.title, paused: body.paused, assignmentId: body.assignmentId },
        caller,
        expected,
      ),
    );
    return this.queries.execute(new GetChatQuery(workspaceId, chatId, caller));
  }

  @Post(':chatId/messages')
  @RequireScope('chats:write')
  @SelfAccess()
  @CreatedLocation<MessageResponse>(messageLocation)
  @ApiCreatedResponse({
    type: MessageResponse,
    description: "a user message, from the chat's member or on its behalf",
  })
  async postMessage(
    @Param('wid') wid: string,
    @Param('chatId') rawId: string,
    @Body() body: PostMessageDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MessageResponse> {
    const workspaceId = wid.toLowerCase();
    const chatId = pathId(rawId, 'Chat');
    const caller = callerOf(principal);
    const messageId = await this.commands.execute<PostUserMessageCommand, number>(
      new PostUserMessageCommand(workspaceId, chatId, body.content, caller),
    );
    return this.queries.execute(new GetMessageQuery(workspaceId, chatId, messageId, caller));
  }

  @Post(':chatId/send-assistant-message')
  @RequireScope('chats:write')
  @SelfAccess()
  @CreatedLocation<MessageResponse>(messageLocation)
  @ApiCreatedResponse({
    type: MessageResponse,
    description: 'sent to every participant through the chat channel; each delivery starts as sent',
  })
  async sendAssistantMessage(
    @Param('wid') wid: string,
    @Param('chatId') rawId: string,
    @Body() body: SendAssistantMessageDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MessageResponse> {
    const workspaceId = wid.toLowerCase();
    const chatId = pathId(rawId, 'Chat');
    const caller = callerOf(principal);
    const written: { response?: MessageResponse } = {};
    const messageId = await this.commands.execute<SendAssistantMessageCommand, number>(
      new SendAssistantMessageCommand(workspaceId, chatId, body.message, caller, undefined, written),
    );
    // The message as the send wrote it: one read less per send. The response still waits
    // until the projections have passed the append (core/cqrs/request-context.hooks.ts), so the
    // caller's next read shows it, as it shows a message read back here.
    return (
      written.response ?? this.queries.execute(new GetMessageQuery(workspaceId, chatId, messageId, caller))
    );
  }

  @Get(':chatId/messages')
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiOkResponse({ type: MessageListResponse, description: 'oldest first, each with its deliveries' })
  listMessages(
    @Param('wid') wid: string,
    @Param('chatId') chatId: string,
    @Query() query: PageQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MessageListResponse> {
    return this.queries.execute(
      new ListMessagesQuery(
        wid.toLowerCase(),
        pathId(chatId, 'Chat'),
        callerOf(principal),
        toPageRequest(query),
      ),
    );
  }

  @Get(':chatId/stream')
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description:
      'Server-Sent Events: each outbound message to the caller (`event: message`, data as in the message list); a delivery is recorded delivered once written here',
  })
  async stream(
    @Param('wid') wid: string,
    @Param('chatId') rawId: string,
    @CurrentPrincipal() principal: Principal,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const chatId = pathId(rawId, 'Chat');
    const caller = callerOf(principal);
    // Visibility first (404 for a chat the caller may not see), then the stream.
    await this.queries.execute(new GetChatQuery(workspaceId, chatId, caller));
    // The stream outlives this request: the credential is asked again before each message
    // (through the auth cache, emptied when a key or token is revoked or a member archived).
    const token = bearerToken(req.headers.authorization);
    const credentials = this.modules.get<CredentialResolver>(CREDENTIAL_RESOLVER, { strict: false });
    const memberships = this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
    const stillAllowed = async (): Promise<boolean> => {
      const credential = token ? await credentials.resolve(token) : undefined;
      if (!credential || credential.credentialId !== principal.credential.credentialId) return false;
      const membership = await memberships.find(workspaceId, credential);
      return membership?.memberId === caller.memberId;
    };
    // A reconnecting EventSource sends the last id it got; anything else is no id (a fresh stream).
    const last = req.headers['last-event-id'];
    const lastEventId =
      typeof last === 'string' && /^\d{1,10}$/.test(last.trim()) && Number(last) <= MAX_ID
        ? Number(last)
        : undefined;
    reply.hijack();
    await this.streams.open(
      { chatId, memberId: caller.memberId, workspaceId, res: reply.raw, stillAllowed, lastEventId },
      String(req.id),
      reply.getHeaders(),
    );
  }

  @Get(':chatId/messages/:messageId')
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiOkResponse({ type: MessageResponse })
  getMessage(
    @Param('wid') wid: string,
    @Param('chatId') chatId: string,
    @Param('messageId') messageId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MessageResponse> {
    return this.queries.execute(
      new GetMessageQuery(
        wid.toLowerCase(),
        pathId(chatId, 'Chat'),
        pathId(messageId, 'Message'),
        callerOf(principal),
      ),
    );
  }
}
