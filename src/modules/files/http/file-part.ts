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

/** The 413s of @fastify/multipart's count limits (MULTIPART_LIMITS), by error code. */
const PARSER_LIMITS: Readonly<Record<string, string>> = {
  FST_FIELDS_LIMIT: `body: at most ${MULTIPART_LIMITS.fields} form fields may come with the file`,
  FST_PARTS_LIMIT: `body: at most ${MULTIPART_LIMITS.parts} parts, the file included`,
  FST_FILES_LIMIT: `file: one file per upload`,
};

export interface FilePart {
  filename: string;
  file: MultipartFile['file'];
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
  let part: MultipartFile | undefined;
  try {
    part = await req.file({ limits: { fileSize: maxBytes + 1 } });
  } catch (err) {
    // The parser's count limits, met before the file part, in words naming the body (the
    // parser says only "reach fields limit").
    const limit = PARSER_LIMITS[(err as { code?: string }).code ?? ''];
    if (limit) throw new PayloadTooLargeError(limit);
    // Its other 4xx keep their status; anything else is a body that is not well-formed multipart.
    const status = (err as { statusCode?: unknown }).statusCode;
    if (err instanceof DomainError || (typeof status === 'number' && status >= 400 && status < 500))
      throw err;
    throw new ValidationError(
      `body: not valid multipart/form-data (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (!part)
    throw new ValidationError('file: required; send the file as a multipart/form-data part named file');
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw new ValidationError('file: required; the file part must be named file');
  }
  return { filename: part.filename, file: part.file };
}
