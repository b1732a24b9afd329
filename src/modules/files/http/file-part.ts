import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import {
  DomainError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { MULTIPART_LIMITS } from '../../../core/http/multipart';

/** The most a multipart body may carry besides the file: its small fields and part headers. */
const FORM_OVERHEAD_BYTES = MULTIPART_LIMITS.fields * MULTIPART_LIMITS.fieldSize + 64 * 1024;

/**
 * A declared Content-Length that cannot fit the limit is refused at once, before a byte is
 * read (chunked uploads, which declare none, are stopped by the size limit as they stream).
 */
export function assertUploadMayFit(req: FastifyRequest, maxBytes: number): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + FORM_OVERHEAD_BYTES)
    throw new PayloadTooLargeError(`file: larger than the limit of ${maxBytes} bytes`);
}

/** @fastify/multipart's count limits (MULTIPART_LIMITS), by error code, in words naming the part at fault. */
const PARSER_LIMITS: Readonly<Record<string, () => DomainError>> = {
  FST_FIELDS_LIMIT: () =>
    new PayloadTooLargeError(`body: at most ${MULTIPART_LIMITS.fields} form fields may come with the file`),
  FST_PARTS_LIMIT: () =>
    new PayloadTooLargeError(`body: at most ${MULTIPART_LIMITS.parts} parts, the file included`),
  FST_FILES_LIMIT: () =>
    new ValidationError('file: one file per upload; send each file in a request of its own'),
};

/** What the parser threw, as the answer to give (the parser says only "reach fields limit"). */
function parserError(err: unknown): Error {
  const limit = PARSER_LIMITS[(err as { code?: string }).code ?? ''];
  if (limit) return limit();
  // Its other 4xx keep their status; anything else is a body that is not well-formed multipart.
  const status = (err as { statusCode?: unknown }).statusCode;
  if (err instanceof DomainError || (typeof status === 'number' && status >= 400 && status < 500))
    return err as Error;
  return new ValidationError(
    `body: not valid multipart/form-data (${err instanceof Error ? err.message : String(err)})`,
  );
}

export interface FilePart {
  filename: string;
  file: MultipartFile['file'];
  /**
   * Reads the body after the file part to its end, once the file has been read: a second
   * file, more fields than the parser takes, or a body cut short is refused (the upload is
   * then not recorded), rather than answered 201 for the first file alone.
   */
  rest(): Promise<void>;
}

/**
 * The part named `file`, as a stream (nothing of it is read yet). The parser's own limit is
 * one byte over ours, so an upload over the limit reaches the command's meter and is refused
 * there, whatever adapter it was streaming to.
 */
export async function readFilePart(req: FastifyRequest, maxBytes: number): Promise<FilePart> {
  // Bodies of another type were refused before the route (core/http/multipart.ts); this is
  // a request without any.
  if (!req.isMultipart())
    throw new UnsupportedMediaTypeError('The request has no body; send the file as multipart/form-data');
  const parts = req.parts({ limits: { fileSize: maxBytes + 1 } });
  let part: MultipartFile | undefined;
  try {
    // Fields before the file are read and dropped (the parser keeps only their count).
    for (let next = await parts.next(); !next.done; next = await parts.next())
      if (next.value.type === 'file') {
        part = next.value;
        break;
      }
  } catch (err) {
    throw parserError(err);
  }
  if (!part)
    throw new ValidationError('file: required; send the file as a multipart/form-data part named file');
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw new ValidationError('file: required; the file part must be named file');
  }
  const rest = async (): Promise<void> => {
    try {
      while (!(await parts.next()).done);
    } catch (err) {
      throw parserError(err);
    }
  };
  return { filename: part.filename, file: part.file, rest };
}
