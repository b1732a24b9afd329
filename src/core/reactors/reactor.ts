import { SetMetadata } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { StoredEvent } from '../event-store/event-store.port';

export interface ReactorDefinition {
  /** Stable name; its checkpoint and leadership lock are keyed by it. */
  name: string;
  eventTypes: readonly string[];
}

/**
 * Turns events into BullMQ jobs. Every job it adds must use `jobIdFor(event, target)`
 * as its jobId, so a replayed or re-delivered event never enqueues twice.
 */
export interface ReactorHandler {
  react(event: StoredEvent): Promise<void>;
  /**
   * Optional: reacts to a batch (in global order) at once, e.g. one Redis call adding
   * every job of the batch. It must enqueue what `react` called on each event in turn
   * would, with the same job ids (the same as a projection's `handleBatch`).
   */
  reactBatch?(events: readonly StoredEvent[]): Promise<void>;
}

export const REACTOR_METADATA = 'spine:reactor';

export const Reactor = (definition: ReactorDefinition): ClassDecorator =>
  SetMetadata(REACTOR_METADATA, definition);

/**
 * Deterministic job id from the event id and the job's target (a rule id, a
 * recipient...). BullMQ refuses ':' in custom ids, so the target is hashed.
 */
export function jobIdFor(event: Pick<StoredEvent, 'id'>, target = ''): string {
  if (!target) return `evt-${event.id}`;
  return `evt-${event.id}-${createHash('sha256').update(target).digest('hex').slice(0, 16)}`;
}

/**
 * Shared queue defaults: retried with exponential backoff; completed jobs kept a week
 * (their ids are what makes a replayed event a no-op); failed jobs kept for operators.
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
  removeOnFail: false,
};
