import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { contentTypeOf, OCTET_STREAM, PLAIN_TEXT } from './content-type';
import { FileCommand, fileDecider, FileUploaded, normalizeFileName } from './file';

const spec = deciderSpec(fileDecider);
const wid = '0190c0de-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const sha = 'a'.repeat(64);

const upload: FileCommand = {
  type: 'UploadFile',
  fileId: 7,
  workspaceId: wid,
  name: 'docs/report.pdf',
  contentType: 'application/pdf',
  size: 1234,
  sha256: sha,
  storageKey: `files/${wid}/k`,
  stagingKey: 'staging/s',
  maxBytes: 2000,
  now,
};

const uploaded: FileUploaded = {
  type: 'FileUploaded',
  data: {
    fileId: 7,
    workspaceId: wid,
    name: 'report.pdf',
    contentType: 'application/pdf',
    size: 1234,
    sha256: sha,
    storageKey: `files/${wid}/k`,
    stagingKey: 'staging/s',
    createdAt: now,
  },
};

describe('file decider', () => {
  it('records an upload with its display name', () => {
    spec.given([]).when(upload).then([uploaded]);
  });

  it('refuses an upload over the limit, a bad hash or size, and a second upload of the same id', () => {
    spec
      .given([])
      .when({ ...upload, size: 2001 })
      .thenThrows(PayloadTooLargeError, /limit of 2000 bytes/);
    spec
      .given([])
      .when({ ...upload, size: -1 })
      .thenThrows(ValidationError, /^file:/);
    spec
      .given([])
      .when({ ...upload, sha256: 'xyz' })
      .thenThrows(ValidationError, /sha256/);
    spec.given([uploaded]).when(upload).thenThrows(ConflictError);
  });

  it('refuses an empty part without a file name (a file input left empty), and keeps an empty file that has one', () => {
    const empty = {
      ...upload,
      size: 0,
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    };
    for (const name of ['', undefined])
      spec
        .given([])
        .when({ ...empty, name })
        .thenThrows(ValidationError, /^file: required/);
    expect(fileDecider.decide({ ...empty, name: 'empty.txt' }, fileDecider.initialState())).toHaveLength(1);
  });

  it('deletes a file of its workspace once, naming every place its bytes may be', () => {
    const del: FileCommand = { type: 'DeleteFile', fileId: 7, workspaceId: wid, now };
    spec
      .given([uploaded])
      .when(del)
      .then([
        {
          type: 'FileDeleted',
          data: {
            fileId: 7,
            workspaceId: wid,
            storageKey: `files/${wid}/k`,
            stagingKey: 'staging/s',
            deletedAt: now,
          },
        },
      ]);
    spec.given([]).when(del).thenThrows(NotFoundError);
    spec
      .given([uploaded])
      .when({ ...del, workspaceId: 'another' })
      .thenThrows(NotFoundError);
    spec
      .given([uploaded, ...fileDecider.decide(del, fileDecider.evolve(fileDecider.initialState(), uploaded))])
      .when(del)
      .thenThrows(NotFoundError);
  });
});

describe('normalizeFileName', () => {
  it.each([
    ['C:\\Users\\ann\\a.png', 'a.png'],
    ['../../etc/passwd', 'passwd'],
    ['  spaced.txt  ', 'spaced.txt'],
    ['bell\u0007\u0000.txt', 'bell.txt'],
    ['half\ud800.txt', 'half.txt'],
    ['..', 'file'],
    ['', 'file'],
    [undefined, 'file'],
    ['dir/', 'file'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['\u2066a\u2069\u202a\u202d.txt', 'a.txt'],
    ['\u202e..', 'file'],
    ['שלום.txt', 'שלום.txt'],
  ])('%j → %j', (raw, expected) => expect(normalizeFileName(raw)).toBe(expected));

  it('cuts long names to 255 characters, keeping the extension', () => {
    const name = normalizeFileName(`${'é'.repeat(300)}.jpeg`);
    expect([...name]).toHaveLength(255);
    expect(name.endsWith('é.jpeg')).toBe(true);
  });
});

describe('contentTypeOf', () => {
  it('takes the sniffed type first, then UTF-8 text, else octet-stream', () => {
    expect(contentTypeOf(Buffer.from('<html>'), 'image/png')).toBe('image/png');
    expect(contentTypeOf(Buffer.from('héllo\r\n\tworld'), undefined)).toBe(PLAIN_TEXT);
    // A multi-byte character cut by the sniffing window is still text.
    expect(contentTypeOf(Buffer.from('héllo').subarray(0, 2), undefined)).toBe(PLAIN_TEXT);
    expect(contentTypeOf(Buffer.from([0x68, 0x00, 0x69]), undefined)).toBe(OCTET_STREAM);
    expect(contentTypeOf(Buffer.from([0xff, 0xfe, 0xfd]), undefined)).toBe(OCTET_STREAM);
    expect(contentTypeOf(Buffer.alloc(0), undefined)).toBe(OCTET_STREAM);
  });
});
