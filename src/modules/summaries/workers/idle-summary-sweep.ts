import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { JsonLogger } from '../../../core/logging/json-logger';
import type { LastMessageEvent } from '../projections/summaries.entities';
import { idleJobId, SUMMARIES_QUEUE, SUMMARY_JOB_OPTIONS, SummaryJob } from './summary-job';

/** Chats a sweep asks for at once (newest first), and at most this many pages per sweep. */
const PAGE = 500;
const PAGES = 20;
/** A chat whose last message is older than the quiet period and this is no longer looked at. */
const LOOKBACK_MS = 7 * 24 * 3600_000;

/** How often the idle chats are looked for: a tenth of the quiet period, between 0.2 s and 30 s. */
export const sweepIntervalMs = (idleMs: number): number =>
  Math.min(30_000, Math.max(200, Math.round(idleMs / 10)));

interface DueRow {
  chat_id: number;
  workspace_id: string;
  last_message_id: number;
  last_message_at: Date;
  last_event: LastMessageEvent | null;
}

/**
 * Finds the chats gone quiet: every sweepIntervalMs, the chats of summary_chats whose last
 * message is at least CHAT_SUMMARY_IDLE_MINUTES old and covered by no summary yet (a
 * partial index holds just those), and adds one idle job for each, caused by and
 * correlated with that last message's event, its id the chat's and the message's (so a
 * sweep that finds the chat again before its summary is projected adds nothing). Why a
 * sweep rather than a delayed job per message: a message then costs the summaries nothing
 * but the read model's row update it already had (no reactor batch, no Redis job to
 * replace per message), and a busy chat still gets one summary per quiet period. A
 * summary so comes between one quiet period and a sweep interval more after the last
 * message. Runs in every process that runs workers; two processes sweeping at once add
 * the same job ids, so once.
 */
@Injectable()
export class IdleSummarySweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly idleMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly db: DataSource,
    @InjectQueue(SUMMARIES_QUEUE) private readonly queue: Queue<SummaryJob>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: JsonLogger,
  ) {
    this.idleMs = Math.max(1, Math.round(config.chatSummaryIdleMinutes * 60_000));
  }

  onApplicationBootstrap(): void {
    if (this.config.role === 'api') return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .catch((error: unknown) =>
          this.logger.event('warn', {
            msg: 'idle summary sweep failed',
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => (this.running = undefined));
    }, sweepIntervalMs(this.idleMs));
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One sweep: adds the idle jobs of the chats due at `now`; answers how many it found. */
  async sweep(now = Date.now()): Promise<number> {
    let found = 0;
    let after: { at: Date; chatId: number } | undefined;
    for (let page = 0; page < PAGES; page++) {
      const rows = (await this.db.query(
        `SELECT chat_id, workspace_id, last_message_id, last_message_at, last_event FROM summary_chats
          WHERE last_message_id IS DISTINCT FROM covered_message_id
            AND last_message_at <= $1 AND last_message_at > $2
            AND ($3::timestamptz IS NULL OR (last_message_at, chat_id) < ($3, $4))
          ORDER BY last_message_at DESC, chat_id DESC LIMIT ${PAGE}`,
        [
          new Date(now - this.idleMs),
          new Date(now - this.idleMs - LOOKBACK_MS),
          after?.at ?? null,
          after?.chatId ?? null,
        ],
      )) as DueRow[];
      found += rows.length;
      const jobs = rows.flatMap((r) => (r.last_event ? [this.jobOf(r, r.last_event)] : []));
      if (jobs.length) await this.queue.addBulk(jobs);
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1];
      after = { at: last.last_message_at, chatId: last.chat_id };
    }
    return found;
  }

  private jobOf(row: DueRow, event: LastMessageEvent) {
    return {
      name: 'idle',
      data: {
        workspaceId: row.workspace_id,
        trigger: 'idle' as const,
        chatId: row.chat_id,
        messageId: row.last_message_id,
        triggerEvent: { id: event.id, type: event.type, commit: event.commit, prepare: event.prepare },
        correlationId: event.correlationId,
      },
      opts: { ...SUMMARY_JOB_OPTIONS, jobId: idleJobId(row.chat_id, row.last_message_id) },
    };
  }
}
