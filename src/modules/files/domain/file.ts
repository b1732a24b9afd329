import { Decider } from '../../../core/cqrs/decider';
import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
} from '../../../core/http/domain-errors';
import type { FileDeleted, FileEvent, FileUploaded } from './file.events';

export { fileStream } from './file.events';
export type { FileDeleted, FileEvent, FileUploaded };

/** Longest file name kept, in characters (longer names are cut, keeping the extension). */
export const FILE_NAME_MAX = 255;
const DEFAULT_FILE_NAME = 'file';
const SHA256_HEX = /^[0-9a-f]{64}$/;
// C0 and C1 controls (NUL included), and DEL: never part of a name shown or sent back in a header.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// Bidirectional embeddings, overrides and isolates: `invoice\u202Efdp.exe` shows as
// `invoiceexe.pdf` wherever the name is displayed. Names need none of them to read right.
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The display name of an upload: the last segment of what the client sent (browsers of old
 * sent whole paths), without control characters, bidirectional overrides or unpaired
 * surrogates, trimmed, at most
 * FILE_NAME_MAX characters (the extension kept), `file` when nothing is left.
 */
export function normalizeFileName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  let name = base.replace(LONE_SURROGATE, '').replace(CONTROL, '').replace(BIDI_CONTROL, '').trim();
  if (name === '.' || name === '..') name = '';
  const chars = [...name];
  if (chars.length > FILE_NAME_MAX) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 ? [...name.slice(dot)] : [];
    const keep = ext.length > 0 && ext.length <= 16 ? ext : [];
    name = chars.slice(0, FILE_NAME_MAX - keep.length).join('') + keep.join('');
  }
  return name || DEFAULT_FILE_NAME;
}

export type FileCommand =
  | {
      type: 'UploadFile';
      fileId: number;
      workspaceId: string;
      name: string | undefined;
      contentType: string;
      size: number;
      sha256: string;
      storageKey: string;
      stagingKey: string;
      /** The size limit in force (FILE_MAX_BYTES): the stream enforces it, the record too. */
      maxBytes: number;
      now: string;
    }
  | { type: 'DeleteFile'; fileId: number; workspaceId: string; now: string };

export interface FileState {
  exists: boolean;
  deleted: boolean;
  workspaceId: string;
  storageKey: string;
  stagingKey: string;
}

export const fileDecider: Decider<FileState, FileCommand, FileEvent> = {
  initialState: () => ({ exists: false, deleted: false, workspaceId: '', storageKey: '', stagingKey: '' }),

  evolve(state, event) {
    switch (event.type) {
      case 'FileUploaded':
        return {
          exists: true,
          deleted: false,
          workspaceId: event.data.workspaceId,
          storageKey: event.data.storageKey,
          stagingKey: event.data.stagingKey,
        };
      case 'FileDeleted':
        return { ...state, deleted: true };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'UploadFile': {
        if (state.exists) throw new ConflictError('A file with this id already exists');
        if (!Number.isSafeInteger(command.size) || command.size < 0)
          throw new ValidationError('file: the size of the upload is not a byte count');
        if (command.size > command.maxBytes)
          throw new PayloadTooLargeError(`file: larger than the limit of ${command.maxBytes} bytes`);
        if (!SHA256_HEX.test(command.sha256)) throw new ValidationError('file: sha256 must be 64 hex digits');
        // What a browser sends for a file input left empty: a part with `filename=""` and no
        // bytes. No file was chosen; an empty file with a name of its own is kept.
        if (command.size === 0 && !command.name)
          throw new ValidationError('file: required; the part named file is empty and names no file');
        return [
          {
            type: 'FileUploaded',
            data: {
              fileId: command.fileId,
              workspaceId: command.workspaceId,
              name: normalizeFileName(command.name),
              contentType: command.contentType,
              size: command.size,
              sha256: command.sha256,
              storageKey: command.storageKey,
              stagingKey: command.stagingKey,
              createdAt: command.now,
            },
          },
        ];
      }
      case 'DeleteFile': {
        // Another workspace's file reads as absent, and a deleted file is gone.
        if (!state.exists || state.deleted || state.workspaceId !== command.workspaceId)
          throw new NotFoundError('File not found');
        return [
          {
            type: 'FileDeleted',
            data: {
              fileId: command.fileId,
              workspaceId: command.workspaceId,
              storageKey: state.storageKey,
              stagingKey: state.stagingKey,
              deletedAt: command.now,
            },
          },
        ];
      }
    }
  },
};
