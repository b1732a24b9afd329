/**
 * Wire-level helpers of the stand-in: the message shapes an EventStoreDB node (22.10 and
 * later) puts on the wire, built from the generated protobuf classes the client ships.
 */
import { Metadata, status } from '@grpc/grpc-js';
import type { ServerErrorResponse } from '@grpc/grpc-js';
import { parse as parseUuid, stringify as stringifyUuid } from 'uuid';
import { Empty, StreamIdentifier, UUID } from '@eventstore/db-client/generated/shared_pb';
import { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { LogPosition, LogRecord } from './transaction-log';

export function streamNameOf(identifier: StreamIdentifier | undefined): string {
  return identifier ? Buffer.from(identifier.getStreamName_asU8()).toString('utf8') : '';
}

export function streamIdentifier(streamName: string): StreamIdentifier {
  return new StreamIdentifier().setStreamName(Uint8Array.from(Buffer.from(streamName, 'utf8')));
}

/** Reads either uuid encoding a client may send; canonical lower-case text, or undefined if malformed. */
export function uuidFromWire(uuid: UUID | undefined): string | undefined {
  if (!uuid) return undefined;
  try {
    if (uuid.hasStructured()) {
      const structured = uuid.getStructured()!;
      const bytes = Buffer.alloc(16);
      bytes.writeBigInt64BE(BigInt(structured.getMostSignificantBits()), 0);
      bytes.writeBigInt64BE(BigInt(structured.getLeastSignificantBits()), 8);
      return stringifyUuid(bytes);
    }
    return stringifyUuid(parseUuid(uuid.getString()));
  } catch {
    return undefined;
  }
}

/** The server answers in the encoding the request's uuid_option asks for; structured is the default. */
export function uuidToWire(id: string, asString: boolean): UUID {
  if (asString) return new UUID().setString(id);
  const bytes = Buffer.from(parseUuid(id));
  return new UUID().setStructured(
    new UUID.Structured()
      .setMostSignificantBits(bytes.readBigInt64BE(0).toString())
      .setLeastSignificantBits(bytes.readBigInt64BE(8).toString()),
  );
}

export function wantsStringUuids(options: ReadReq.Options): boolean {
  return options.getUuidOption()?.hasString() ?? false;
}

/**
 * One event as ReadResp.event. $all reads and subscriptions carry the event's commit
 * position on the ReadEvent; stream reads carry `no_position` there, while the recorded
 * event itself holds commit and prepare positions (servers after 22.6 fill them in).
 */
export function readEventResponse(
  record: LogRecord,
  options: { stringUuids: boolean; fromAll: boolean },
): ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(uuidToWire(record.id, options.stringUuids))
    .setStreamIdentifier(streamIdentifier(record.streamName))
    .setStreamRevision(record.revision.toString())
    .setCommitPosition(record.position.commit.toString())
    .setPreparePosition(record.position.prepare.toString())
    .setData(record.data)
    .setCustomMetadata(record.customMetadata);
  const metadata = recorded.getMetadataMap();
  metadata.set('type', record.type);
  metadata.set('created', record.created.toString());
  metadata.set('content-type', record.contentType);

  const readEvent = new ReadResp.ReadEvent().setEvent(recorded);
  if (options.fromAll) readEvent.setCommitPosition(record.position.commit.toString());
  else readEvent.setNoPosition(new Empty());
  return new ReadResp().setEvent(readEvent);
}

export function confirmationResponse(subscriptionId: string): ReadResp {
  return new ReadResp().setConfirmation(
    new ReadResp.SubscriptionConfirmation().setSubscriptionId(subscriptionId),
  );
}

export function checkpointResponse(position: LogPosition): ReadResp {
  return new ReadResp().setCheckpoint(
    new ReadResp.Checkpoint()
      .setCommitPosition(position.commit.toString())
      .setPreparePosition(position.prepare.toString()),
  );
}

export function caughtUpResponse(): ReadResp {
  return new ReadResp().setCaughtUp(new ReadResp.CaughtUp());
}

export function streamNotFoundResponse(streamName: string): ReadResp {
  return new ReadResp().setStreamNotFound(
    new ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(streamName)),
  );
}

export function positionFromWire(position: ReadReq.Options.Position | undefined): LogPosition {
  return {
    commit: BigInt(position?.getCommitPosition() ?? '0'),
    prepare: BigInt(position?.getPreparePosition() ?? '0'),
  };
}

/** Server-side filter of a read or subscription, as EventStoreDB evaluates it (regex: a search, not a full match). */
export function recordFilter(options: ReadReq.Options): ((record: LogRecord) => boolean) | undefined {
  if (!options.hasFilter()) return undefined;
  const filter = options.getFilter()!;
  const onEventType = filter.hasEventType();
  const expression = onEventType ? filter.getEventType() : filter.getStreamIdentifier();
  if (!expression)
    throw rpcError(status.INVALID_ARGUMENT, 'A filter needs an event type or stream identifier expression');
  const field = (record: LogRecord) => (onEventType ? record.type : record.streamName);
  const regex = expression.getRegex();
  if (regex) {
    const compiled = new RegExp(regex);
    return (record) => compiled.test(field(record));
  }
  const prefixes = expression.getPrefixList();
  return (record) => prefixes.some((prefix) => field(record).startsWith(prefix));
}

/**
 * How many events a filtered subscription scans between `checkpoint` messages:
 * the search window (32 unless `max` is given) times the checkpoint interval multiplier.
 */
export function checkpointEvery(options: ReadReq.Options): number {
  const filter = options.getFilter();
  if (!filter) return Number.POSITIVE_INFINITY;
  const window = filter.hasMax() ? filter.getMax() : 32;
  return Math.max(1, window) * Math.max(1, filter.getCheckpointintervalmultiplier());
}

/** An RPC failure with the `exception` trailer the client turns into its typed errors. */
export function rpcError(
  code: status,
  details: string,
  trailers: Record<string, string> = {},
): ServerErrorResponse {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(details), { code, details, metadata });
}
