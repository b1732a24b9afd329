/** A file's stream: `file-<id>`, its events carry the workspace (as does their metadata). */
export const fileStream = (fileId: number): string => `file-${fileId}`;

export interface FileUploaded {
  type: 'FileUploaded';
  data: {
    fileId: number;
    workspaceId: string;
    /** The client's file name, reduced to a safe display name (see normalizeFileName). */
    name: string;
    /** Sniffed from the bytes, never the client's word (domain/content-type.ts). */
    contentType: string;
    size: number;
    /** SHA-256 of the bytes, hex. */
    sha256: string;
    /** Where the bytes are read from (BlobStorage), once committed. */
    storageKey: string;
    /** Where the bytes were staged: a commit interrupted by a crash is finished from here. */
    stagingKey: string;
    createdAt: string;
  };
}

export interface FileDeleted {
  type: 'FileDeleted';
  data: {
    fileId: number;
    workspaceId: string;
    /** The bytes to remove, wherever they are: committed, or still staged after a crash. */
    storageKey: string;
    stagingKey: string;
    deletedAt: string;
  };
}

export type FileEvent = FileUploaded | FileDeleted;
