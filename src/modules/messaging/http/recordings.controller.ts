import { Controller, Get, Param, Res } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import { MEMBERSHIP_RESOLVER, MembershipResolver, Principal } from '../../../core/auth/principal';
import { intersectScopesOnce } from '../../../core/auth/scopes';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { NotFoundError } from '../../../core/http/domain-errors';
import { Inject } from '@nestjs/common';
import { BLOB_STORAGE, BlobStorage } from '../../files';
import { chatDecider } from '../domain/chat';
import { chatStream } from '../domain/chat.events';
import { assertMaySeeChat } from '../domain/messaging-access.policy';
import { pathId } from './ids';

/**
 * GET /recordings/chat/{chatId}/audio.wav (SPEC "Chats"): the stored recording of a voice
 * chat. The path names no workspace, so the caller's membership is looked up in the chat's
 * own workspace; then the chat rules apply (chats:read, or taking part). A chat the caller
 * may not see, or one without stored audio, is 404.
 */
@ApiTags('chats')
@Controller('recordings/chat')
export class RecordingsController {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly modules: ModuleRef,
    @Inject(BLOB_STORAGE) private readonly blobs: BlobStorage,
  ) {}

  @Get(':chatId/audio.wav')
  @SelfAccess()
  @ApiProduces('audio/wav')
  @ApiOkResponse({ description: 'the WAV bytes; needs chats:read or taking part in the chat' })
  async audio(
    @Param('chatId') rawId: string,
    @CurrentPrincipal() principal: Principal,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const chatId = pathId(rawId, 'Chat');
    const { state } = await this.repo.load(chatStream(chatId), chatDecider);
    const chat = state.chat;
    if (!chat) throw new NotFoundError('Chat not found');
    const credential = principal.credential;
    if (credential.workspaceId && credential.workspaceId !== chat.workspaceId)
      throw new NotFoundError('Chat not found');
    const memberships = this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
    const membership = await memberships.find(chat.workspaceId, credential);
    if (!membership) throw new NotFoundError('Chat not found');
    const scopedCredential = credential.kind !== 'member_token';
    const scopes = scopedCredential ? intersectScopesOnce(credential.scopes, membership.roleScopes) : [];
    // As every chat route (callerOf): the own-chats rule reaches a scoped credential (API
    // key, OAuth token) only when its own scopes name chats:read.
    assertMaySeeChat(
      {
        scopes,
        memberId: membership.memberId,
        credentialScopes: scopedCredential ? credential.scopes : undefined,
      },
      chat,
    );
    const recording = state.voice.recording;
    const blob = recording && (await this.blobs.open(recording.key));
    if (!blob) throw new NotFoundError('No audio recording for this chat');
    await reply
      .header('content-type', 'audio/wav')
      .header('content-length', String(blob.size))
      .header('cache-control', 'private, no-store')
      .send(blob.stream);
  }
}
