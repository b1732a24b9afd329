/**
 * event_store.client.streams.Streams as the stand-in serves it: Append (client
 * streaming: options, then proposed messages) and Read (server streaming: stream and
 * $all reads, stream and $all catch-up subscriptions). Delete, Tombstone and
 * BatchAppend answer UNIMPLEMENTED, like a server that predates them would.
 */
import { randomUUID } from 'crypto';
import { status } from '@grpc/grpc-js';
import type {
  handleClientStreamingCall,
  handleServerStreamingCall,
  ServerWritableStream,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { AppendReq, AppendResp, ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import {
  caughtUpResponse,
  checkpointEvery,
  checkpointResponse,
  confirmationResponse,
  positionFromWire,
  readEventResponse,
  recordFilter,
  rpcError,
  streamNameOf,
  streamNotFoundResponse,
  uuidFromWire,
  wantsStringUuids,
} from './protocol';
import { ResponseWriter } from './response-writer';
import type { ExpectedStreamRevision, LogRecord, ProposedEvent, TransactionLog } from './transaction-log';

/** EventStoreDB's default MaxAppendSize. */
const MAX_APPEND_SIZE = 1_048_576;

/** What the stand-in has served, for tests that measure how much a reader reads. */
export interface StandInStats {
  /** Events sent in answers to $all reads (not subscriptions), forwards or backwards. */
  allEventsRead: number;
}

export function createStreamsService(log: TransactionLog, stats: StandInStats): UntypedServiceImplementation {
  const unimplemented = (_call: unknown, callback: (error: Error) => void) =>
    callback(rpcError(status.UNIMPLEMENTED, 'Not implemented by the EventStoreDB stand-in'));
  return {
    append: appendHandler(log),
    read: readHandler(log, stats),
    delete: unimplemented,
    tombstone: unimplemented,
    batchAppend: (call: ServerWritableStream<unknown, unknown>) =>
      call.emit('error', rpcError(status.UNIMPLEMENTED, 'Not implemented by the EventStoreDB stand-in')),
  };
}

function appendHandler(log: TransactionLog): handleClientStreamingCall<AppendReq, AppendResp> {
  return (call, callback) => {
    let options: AppendReq.Options | undefined;
    const proposed: ProposedEvent[] = [];
    let size = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      callback(error);
    };

    call.on('data', (request: AppendReq) => {
      if (failed) return;
      if (!options) {
        if (!request.hasOptions())
          return fail(rpcError(status.INVALID_ARGUMENT, 'The first append message must hold the options'));
        options = request.getOptions()!;
        return;
      }
      const message = request.getProposedMessage();
      if (!message)
        return fail(rpcError(status.INVALID_ARGUMENT, 'Expected a proposed message after the options'));
      const metadata = message.getMetadataMap();
      for (const required of ['type', 'content-type']) {
        if (!metadata.has(required)) {
          return fail(
            rpcError(status.INVALID_ARGUMENT, `Required metadata property ${required} is missing`, {
              exception: 'missing-required-metadata-property',
              'required-metadata-properties': required,
            }),
          );
        }
      }
      const id = uuidFromWire(message.getId());
      if (!id)
        return fail(rpcError(status.INVALID_ARGUMENT, 'A proposed message needs a valid uuid as its id'));
      const data = message.getData_asU8();
      const customMetadata = message.getCustomMetadata_asU8();
      size += data.length + customMetadata.length;
      if (size > MAX_APPEND_SIZE) {
        return fail(
          rpcError(status.INVALID_ARGUMENT, `Maximum Append Size of ${MAX_APPEND_SIZE} Exceeded.`, {
            exception: 'maximum-append-size-exceeded',
            'maximum-append-size': String(MAX_APPEND_SIZE),
          }),
        );
      }
      proposed.push({
        id,
        type: metadata.get('type')!,
        contentType: metadata.get('content-type')!,
        data,
        customMetadata,
      });
    });

    call.on('end', () => {
      if (failed) return;
      if (!options) return fail(rpcError(status.INVALID_ARGUMENT, 'An append needs its options'));
      const streamName = streamNameOf(options.getStreamIdentifier());
      if (!streamName) return fail(rpcError(status.INVALID_ARGUMENT, 'An append needs a stream name'));
      const expected = expectedRevisionOf(options);
      const outcome = log.append(streamName, expected, proposed);
      const response = new AppendResp();
      if (outcome.kind === 'success') {
        const success = new AppendResp.Success();
        if (outcome.currentRevision < 0n) success.setNoStream(new Empty());
        else success.setCurrentRevision(outcome.currentRevision.toString());
        if (outcome.position) {
          success.setPosition(
            new AppendResp.Position()
              .setCommitPosition(outcome.position.commit.toString())
              .setPreparePosition(outcome.position.prepare.toString()),
          );
        } else {
          success.setNoPosition(new Empty());
        }
        response.setSuccess(success);
      } else {
        const wrong = new AppendResp.WrongExpectedVersion();
        if (outcome.currentRevision === undefined) wrong.setCurrentNoStream(new Empty());
        else wrong.setCurrentRevision(outcome.currentRevision.toString());
        switch (expected.kind) {
          case 'any':
            wrong.setExpectedAny(new Empty());
            break;
          case 'no_stream':
            wrong.setExpectedNoStream(new Empty());
            break;
          case 'stream_exists':
            wrong.setExpectedStreamExists(new Empty());
            break;
          case 'revision':
            wrong.setExpectedRevision(expected.revision.toString());
            break;
        }
        response.setWrongExpectedVersion(wrong);
      }
      callback(null, response);
    });
  };
}

function expectedRevisionOf(options: AppendReq.Options): ExpectedStreamRevision {
  switch (options.getExpectedStreamRevisionCase()) {
    case AppendReq.Options.ExpectedStreamRevisionCase.REVISION:
      return { kind: 'revision', revision: BigInt(options.getRevision()) };
    case AppendReq.Options.ExpectedStreamRevisionCase.NO_STREAM:
      return { kind: 'no_stream' };
    case AppendReq.Options.ExpectedStreamRevisionCase.STREAM_EXISTS:
      return { kind: 'stream_exists' };
    default:
      return { kind: 'any' };
  }
}

function readHandler(log: TransactionLog, stats: StandInStats): handleServerStreamingCall<ReadReq, ReadResp> {
  return (call) => {
    const options = call.request.getOptions();
    const out = new ResponseWriter(call);
    let run: Promise<void>;
    if (!options) {
      run = Promise.reject(rpcError(status.INVALID_ARGUMENT, 'A read needs its options'));
    } else {
      const subscription = options.getCountOptionCase() === ReadReq.Options.CountOptionCase.SUBSCRIPTION;
      const isAll = options.getStreamOptionCase() === ReadReq.Options.StreamOptionCase.ALL;
      const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
      if (subscription && backwards)
        run = Promise.reject(rpcError(status.INVALID_ARGUMENT, 'Subscriptions only read forwards'));
      else if (subscription)
        run = isAll ? subscribeToAll(log, options, out) : subscribeToStream(log, options, out);
      else run = isAll ? readAll(log, options, out, stats) : readStream(log, options, out);
    }
    run.then(
      () => out.end(),
      (error: Error) => out.fail(error),
    );
  };
}

async function readStream(log: TransactionLog, options: ReadReq.Options, out: ResponseWriter): Promise<void> {
  const streamOptions = options.getStream()!;
  const streamName = streamNameOf(streamOptions.getStreamIdentifier());
  const events = log.stream(streamName);
  if (!events) {
    await out.write(streamNotFoundResponse(streamName));
    return;
  }
  const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
  let remaining = countOf(options);
  const stringUuids = wantsStringUuids(options);
  const last = events.length - 1;
  let index: number;
  switch (streamOptions.getRevisionOptionCase()) {
    case ReadReq.Options.StreamOptions.RevisionOptionCase.END:
      index = backwards ? last : events.length;
      break;
    case ReadReq.Options.StreamOptions.RevisionOptionCase.REVISION: {
      const revision = BigInt(streamOptions.getRevision());
      index = revision > BigInt(last) ? (backwards ? last : events.length) : Number(revision);
      break;
    }
    default:
      index = backwards ? -1 : 0;
  }
  while (remaining > 0 && index >= 0 && index <= last) {
    if (!(await out.write(readEventResponse(events[index], { stringUuids, fromAll: false })))) return;
    remaining--;
    index += backwards ? -1 : 1;
  }
}

async function readAll(
  log: TransactionLog,
  options: ReadReq.Options,
  out: ResponseWriter,
  stats: StandInStats,
): Promise<void> {
  const allOptions = options.getAll()!;
  const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
  const filter = recordFilter(options);
  const stringUuids = wantsStringUuids(options);
  let remaining = countOf(options);
  let index: number;
  switch (allOptions.getAllOptionCase()) {
    case ReadReq.Options.AllOptions.AllOptionCase.END:
      index = backwards ? log.records.length - 1 : log.records.length;
      break;
    case ReadReq.Options.AllOptions.AllOptionCase.POSITION: {
      // Forwards from a position includes the event there; backwards reads what lies before it.
      const at = log.indexAtOrAfter(positionFromWire(allOptions.getPosition()));
      index = backwards ? at - 1 : at;
      break;
    }
    default:
      index = backwards ? -1 : 0;
  }
  while (remaining > 0 && index >= 0 && index < log.records.length) {
    const record = log.records[index];
    index += backwards ? -1 : 1;
    if (filter && !filter(record)) continue;
    stats.allEventsRead++;
    if (!(await out.write(readEventResponse(record, { stringUuids, fromAll: true })))) return;
    remaining--;
  }
}

async function subscribeToAll(
  log: TransactionLog,
  options: ReadReq.Options,
  out: ResponseWriter,
): Promise<void> {
  const allOptions = options.getAll()!;
  let start: number;
  switch (allOptions.getAllOptionCase()) {
    case ReadReq.Options.AllOptions.AllOptionCase.END:
      start = log.records.length;
      break;
    case ReadReq.Options.AllOptions.AllOptionCase.POSITION:
      // A subscription's start position is exclusive: it delivers what comes after it.
      start = log.indexAfter(positionFromWire(allOptions.getPosition()));
      break;
    default:
      start = 0;
  }
  await pump(log, out, {
    source: () => log.records,
    start,
    filter: recordFilter(options),
    checkpointEvery: checkpointEvery(options),
    stringUuids: wantsStringUuids(options),
    fromAll: true,
  });
}

async function subscribeToStream(
  log: TransactionLog,
  options: ReadReq.Options,
  out: ResponseWriter,
): Promise<void> {
  if (options.hasFilter()) throw rpcError(status.INVALID_ARGUMENT, 'Stream subscriptions take no filter');
  const streamOptions = options.getStream()!;
  const streamName = streamNameOf(streamOptions.getStreamIdentifier());
  let start: number;
  switch (streamOptions.getRevisionOptionCase()) {
    case ReadReq.Options.StreamOptions.RevisionOptionCase.END:
      start = log.stream(streamName)?.length ?? 0;
      break;
    case ReadReq.Options.StreamOptions.RevisionOptionCase.REVISION:
      start = Number(BigInt(streamOptions.getRevision()) + 1n);
      break;
    default:
      start = 0;
  }
  await pump(log, out, {
    source: () => log.stream(streamName) ?? [],
    start,
    filter: undefined,
    checkpointEvery: Number.POSITIVE_INFINITY,
    stringUuids: wantsStringUuids(options),
    fromAll: false,
  });
}

interface PumpOptions {
  source: () => readonly LogRecord[];
  start: number;
  filter: ((record: LogRecord) => boolean) | undefined;
  checkpointEvery: number;
  stringUuids: boolean;
  fromAll: boolean;
}

/**
 * Catch-up and live are one loop over an append-only array: deliver from the cursor to
 * the end, say caught_up once, wait for the next write, repeat until the client cancels.
 * Nothing is skipped or repeated at the switch to live, and order is the log's order.
 */
async function pump(log: TransactionLog, out: ResponseWriter, options: PumpOptions): Promise<void> {
  if (!(await out.write(confirmationResponse(randomUUID())))) return;
  let index = options.start;
  let scanned = 0;
  let caughtUp = false;
  let lastScanned: LogRecord | undefined;
  while (!out.cancelled) {
    const records = options.source();
    while (index < records.length) {
      const record = records[index++];
      lastScanned = record;
      if (!options.filter || options.filter(record)) {
        if (
          !(await out.write(
            readEventResponse(record, { stringUuids: options.stringUuids, fromAll: options.fromAll }),
          ))
        )
          return;
      }
      if (++scanned >= options.checkpointEvery) {
        scanned = 0;
        if (!(await out.write(checkpointResponse(record.position)))) return;
      }
    }
    if (!caughtUp) {
      caughtUp = true;
      if (options.filter && lastScanned && !(await out.write(checkpointResponse(lastScanned.position))))
        return;
      if (!(await out.write(caughtUpResponse()))) return;
    }
    if (index >= options.source().length) await out.untilAppendOrCancel(log);
  }
}

function countOf(options: ReadReq.Options): number {
  const count = BigInt(options.getCount() || '0');
  return count > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(count);
}
