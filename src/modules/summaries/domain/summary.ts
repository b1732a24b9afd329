import type { Decider } from '../../../core/cqrs/decider';
import type { SummaryEvent } from './summary.events';

/** The keys of the summaries written so far, and the last message the newest one covered. */
export interface SummaryState {
  keys: ReadonlySet<string>;
  lastCoveredMessageId: number | null;
}

/** Write one summary, unless one with its key exists, or (idle) nothing was said since the last one. */
export interface RecordSummary {
  type: 'RecordSummary';
  summary: SummaryEvent;
}

/**
 * Idempotence lives here: a job that runs twice (a retry after its append, a replayed
 * trigger) decides on the stream and finds its key already written. An idle summary of a
 * chat whose newest summary already covers its last message is also nothing: a quiet chat
 * summarised on pause is not summarised again when the idle timer then fires.
 */
export const summaryDecider: Decider<SummaryState, RecordSummary, SummaryEvent> = {
  initialState: () => ({ keys: new Set(), lastCoveredMessageId: null }),
  evolve: (state, event) => ({
    keys: new Set([...state.keys, event.data.key]),
    lastCoveredMessageId: event.data.lastMessageId ?? state.lastCoveredMessageId,
  }),
  decide: (command, state) => {
    const s = command.summary.data;
    if (state.keys.has(s.key)) return [];
    if (s.trigger === 'idle' && s.lastMessageId !== null && s.lastMessageId === state.lastCoveredMessageId)
      return [];
    return [command.summary];
  },
};
