import { ValidationError } from '../../../core/http/domain-errors';
import type { CallEvent, CallOutcome, ChatCreated } from './chat.events';

/** What the chat's stream knows of its calls: per call sid, started / completed; the recording. */
export interface CallsState {
  /** The outbound call's sid once the provider accepted it. */
  placedSid?: string;
  calls: Record<string, { started: boolean; completed: boolean }>;
  /** Recording sids the provider announced, and the one stored last (what GET audio.wav serves). */
  recordings: Record<string, { stored: boolean }>;
  recording: { recordingSid: string; key: string; bytes: number } | null;
}

export const initialCalls = (): CallsState => ({ calls: {}, recordings: {}, recording: null });

const FINAL: Record<string, CallOutcome> = {
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  failed: 'failed',
  canceled: 'canceled',
};

export type CallCommand =
  | { type: 'RecordCallPlaced'; callSid: string; to: string; now: string }
  | { type: 'RecordCallStatus'; callSid: string; status: string; durationSeconds: number; now: string }
  | { type: 'RecordCallRecording'; callSid: string; recordingSid: string; recordingUrl: string; now: string }
  | { type: 'StoreCallRecording'; recordingSid: string; key: string; bytes: number; now: string };

function voiceChat(chat: ChatCreated['data']): void {
  if (chat.channel !== 'phone-voice') throw new ValidationError('chatId: not a phone-voice chat');
}

/**
 * A call's lifecycle from the provider's callbacks, each applied once whatever their order
 * or repetition: `in-progress` starts it, a final status (completed, busy, no-answer,
 * failed, canceled) completes it; a start arriving after the end is not recorded. Other
 * statuses (queued, initiated, ringing) change nothing.
 */
export function decideCall(command: CallCommand, chat: ChatCreated['data'], state: CallsState): CallEvent[] {
  voiceChat(chat);
  const base = { chatId: chat.chatId, workspaceId: chat.workspaceId };
  switch (command.type) {
    case 'RecordCallPlaced':
      if (state.placedSid) return [];
      return [
        {
          type: 'CallPlaced',
          data: { ...base, callSid: command.callSid, to: command.to, placedAt: command.now },
        },
      ];
    case 'RecordCallStatus': {
      const call = state.calls[command.callSid] ?? { started: false, completed: false };
      if (call.completed) return [];
      // Own keys only: a CallStatus of `constructor` would otherwise read Object's prototype.
      const outcome = Object.hasOwn(FINAL, command.status) ? FINAL[command.status] : undefined;
      if (outcome)
        return [
          {
            type: 'CallCompleted',
            data: {
              ...base,
              callSid: command.callSid,
              durationSeconds: command.durationSeconds,
              outcome,
              completedAt: command.now,
            },
          },
        ];
      if (command.status === 'in-progress' && !call.started)
        return [{ type: 'CallStarted', data: { ...base, callSid: command.callSid, startedAt: command.now } }];
      return [];
    }
    case 'RecordCallRecording':
      if (Object.hasOwn(state.recordings, command.recordingSid)) return [];
      return [
        {
          type: 'CallRecordingReceived',
          data: {
            ...base,
            callSid: command.callSid,
            recordingSid: command.recordingSid,
            recordingUrl: command.recordingUrl,
            receivedAt: command.now,
          },
        },
      ];
    case 'StoreCallRecording': {
      const known = Object.hasOwn(state.recordings, command.recordingSid)
        ? state.recordings[command.recordingSid]
        : undefined;
      if (!known || known.stored) return [];
      return [
        {
          type: 'CallRecordingStored',
          data: {
            ...base,
            recordingSid: command.recordingSid,
            key: command.key,
            bytes: command.bytes,
            storedAt: command.now,
          },
        },
      ];
    }
  }
}

export function evolveCalls(state: CallsState, event: CallEvent): CallsState {
  switch (event.type) {
    case 'CallPlaced':
      return { ...state, placedSid: event.data.callSid };
    case 'CallStarted': {
      const call = state.calls[event.data.callSid] ?? { started: false, completed: false };
      return { ...state, calls: { ...state.calls, [event.data.callSid]: { ...call, started: true } } };
    }
    case 'CallCompleted': {
      const call = state.calls[event.data.callSid] ?? { started: false, completed: false };
      return { ...state, calls: { ...state.calls, [event.data.callSid]: { ...call, completed: true } } };
    }
    case 'CallRecordingReceived':
      return { ...state, recordings: { ...state.recordings, [event.data.recordingSid]: { stored: false } } };
    case 'CallRecordingStored':
      return {
        ...state,
        recordings: { ...state.recordings, [event.data.recordingSid]: { stored: true } },
        recording: { recordingSid: event.data.recordingSid, key: event.data.key, bytes: event.data.bytes },
      };
  }
}
