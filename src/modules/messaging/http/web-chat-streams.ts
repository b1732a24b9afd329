import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { ServerResponse } from 'node:http';
import { DataSource, MoreThan } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { EVENT_STORE, EventStore } from '../../../core/event-store/event-store.port';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { createRedis, REDIS } from '../../../core/redis/redis';
import { chatDecider } from '../domain/chat';
import { chatStream, MessageSent } from '../domain/chat.events';
import { MessageDeliveryEntity } from '../projections/messaging.entities';

/** What the web-chat worker publishes for each delivery: ids only, never content. */
export interface WebChatNotice {
  chatId: number;
  messageId: number;
  recipientMemberId: number;
  workspaceId: string;
  correlationId: string;
  causationId: string | undefined;
}

interface Connection {
  chatId: number;
  memberId: number | undefined;
  workspaceId: string;
  res: ServerResponse;
  /**
   * Whether the credential that opened the stream still may: a stream outlives its request,
   * and a revoked token or key, or an archived member, must hear nothing more. Asked before
   * each message is written and whenever credentials change (auth notices); false ends it.
   */
  stillAllowed?: () => Promise<boolean>;
  /**
   * The client's `Last-Event-ID` on reconnecting (the id of the last message it got): the
   * messages to its member written since (recorded delivered, but perhaps written to a
   * connection that was dying) are written again on this stream, before the pending ones.
   */
  lastEventId?: number;
}

/** A message's SSE frame: its id (the message id, which Last-Event-ID names back) and the message. */
function frameOf(d: MessageSent['data']): string {
  const payload = JSON.stringify({
    id: d.messageId,
    chatId: d.chatId,
    direction: 'outbound',
    role: d.role,
    content: d.content,
    createdAt: d.sentAt,
  });
  return `id: ${d.messageId}\nevent: message\ndata: ${payload}\n\n`;
}

const KEEP_ALIVE_MS = 15_000;
const RECHECK_BATCH = 16;

/**
 * Web chat over Server-Sent Events (issue 11, item 8). The delivery worker may run in
 * another process than the API holding a member's stream, so it publishes each delivery
 * on a Redis channel of the chat; every API process with a stream open on that chat
 * writes the message to its member's streams and records the delivery `delivered` once
 * written. A delivery published while no stream was open stays `sent` and is written
 * (and recorded) when the member next connects.
 */
@Injectable()
export class WebChatStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger('WebChatStreams');
  private readonly connections = new Set<Connection>();
  private subscriber: Redis | undefined;
  private readonly subscribed = new Map<string, number>();
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    feed: CheckpointFeed,
  ) {
    // A key or token revoked, a member archived...: after the auth cache has dropped what it
    // held (its own listener of the same notice), every open stream's credential is asked again.
    this.unsubscribe = feed.subscribe((n) => {
      if (n.auth) setImmediate(() => void this.recheck());
    });
  }

  private async allowed(connection: Connection): Promise<boolean> {
    if (!connection.stillAllowed) return true;
    const ok = await connection.stillAllowed().catch(() => false);
    if (!ok) this.end(connection);
    return ok;
  }

  /** Every open stream's credential, a few at a time (the auth cache was just emptied). */
  private async recheck(): Promise<void> {
    const open = [...this.connections];
    for (let i = 0; i < open.length; i += RECHECK_BATCH)
      await Promise.all(open.slice(i, i + RECHECK_BATCH).map((c) => this.allowed(c)));
  }

  private end(connection: Connection): void {
    if (!connection.res.writableEnded) connection.res.end();
    void this.close(connection);
  }

  private channel(chatId: number): string {
    return `${this.config.redisPrefix}:web-chat:${chatId}`;
  }

  /** Worker side: tell the API processes holding streams of this chat. */
  async publish(notice: WebChatNotice): Promise<void> {
    await this.redis.publish(this.channel(notice.chatId), JSON.stringify(notice));
  }

  /**
   * API side: a client opened the stream of a chat; pending deliveries to its member go
   * out first. `headers`: those the request's hooks set already (X-Request-Id, rate limits).
   */
  async open(
    connection: Connection,
    requestId: string,
    headers: Record<string, unknown> = {},
  ): Promise<void> {
    const { res } = connection;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\n\n');
    this.connections.add(connection);
    res.on('close', () => void this.close(connection));
    await this.listen(connection.chatId);
    this.keepAlive ??= setInterval(() => {
      for (const c of this.connections) c.res.write(': keep-alive\n\n');
    }, KEEP_ALIVE_MS).unref();
    if (connection.memberId === undefined) return;
    if (connection.lastEventId !== undefined) await this.replay(connection, connection.lastEventId);
    const pending = await this.db.getRepository(MessageDeliveryEntity).find({
      where: { chatId: connection.chatId, memberId: connection.memberId, status: 'sent' },
      order: { messageId: 'ASC' },
    });
    for (const d of pending)
      await this.deliver({
        chatId: d.chatId,
        messageId: d.messageId,
        recipientMemberId: d.memberId,
        workspaceId: d.workspaceId,
        correlationId: requestId,
        causationId: undefined,
      });
  }

  /**
   * Writes again, on this stream only, the messages to its member delivered after
   * `lastEventId`: the client says it did not get them. Nothing is recorded (they are
   * delivered already); the member may read them anyway (GET .../messages).
   */
  private async replay(connection: Connection, lastEventId: number): Promise<void> {
    const missed = await this.db.getRepository(MessageDeliveryEntity).find({
      where: {
        chatId: connection.chatId,
        memberId: connection.memberId,
        status: 'delivered',
        messageId: MoreThan(lastEventId),
      },
      order: { messageId: 'ASC' },
    });
    if (!missed.length) return;
    const ids = new Set(missed.map((d) => d.messageId));
    const events = await this.store.readStream(chatStream(connection.chatId));
    for (const e of events) {
      if (e.type !== 'MessageSent' || !ids.has((e.data as MessageSent['data']).messageId)) continue;
      if (connection.res.writableEnded || !(await this.allowed(connection))) return;
      connection.res.write(frameOf(e.data as MessageSent['data']));
    }
  }

  private async listen(chatId: number): Promise<void> {
    const channel = this.channel(chatId);
    const count = this.subscribed.get(channel) ?? 0;
    this.subscribed.set(channel, count + 1);
    if (count > 0) return;
    if (!this.subscriber) {
      this.subscriber = createRedis(this.config.redisUrl);
      this.subscriber.on('message', (_channel: string, raw: string) => {
        void this.deliver(JSON.parse(raw) as WebChatNotice).catch((err: unknown) =>
          this.logger.error({ msg: 'web chat delivery failed', err }),
        );
      });
    }
    await this.subscriber.subscribe(channel);
  }

  private async close(connection: Connection): Promise<void> {
    if (!this.connections.delete(connection)) return;
    const channel = this.channel(connection.chatId);
    const count = (this.subscribed.get(channel) ?? 1) - 1;
    if (count > 0) {
      this.subscribed.set(channel, count);
      return;
    }
    this.subscribed.delete(channel);
    await this.subscriber?.unsubscribe(channel).catch(() => undefined);
  }

  /** Writes the message to the recipient's open streams; recorded delivered once written to one. */
  private async deliver(notice: WebChatNotice): Promise<void> {
    const targets = [...this.connections].filter(
      (c) => c.chatId === notice.chatId && c.memberId === notice.recipientMemberId,
    );
    if (!targets.length) return;
    const events = await this.store.readStream(chatStream(notice.chatId));
    const sent = events.find(
      (e) => e.type === 'MessageSent' && (e.data as MessageSent['data']).messageId === notice.messageId,
    );
    if (!sent) return;
    const frame = frameOf(sent.data as MessageSent['data']);
    let written = false;
    for (const c of targets) {
      if (c.res.writableEnded || !(await this.allowed(c))) continue;
      c.res.write(frame);
      written = true;
    }
    if (!written) return;
    const ctx = {
      requestId: notice.correlationId,
      ...(notice.causationId ? { causationId: notice.causationId } : {}),
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    await requestContext.run(ctx, () =>
      this.repo.handle({
        streamName: chatStream(notice.chatId),
        workspaceId: notice.workspaceId,
        decider: chatDecider,
        maxRetries: 10,
        command: {
          type: 'RecordOutcome',
          messageId: notice.messageId,
          recipientMemberId: notice.recipientMemberId,
          outcome: 'delivered',
          providerMessageId: null,
          now: new Date().toISOString(),
        },
      }),
    );
  }

  /** Before the HTTP server closes: an open stream would otherwise hold the shutdown until its timeout. */
  beforeApplicationShutdown(): void {
    this.unsubscribe();
    if (this.keepAlive) clearInterval(this.keepAlive);
    for (const c of this.connections) c.res.end();
    this.connections.clear();
    this.subscriber?.disconnect();
  }
}
