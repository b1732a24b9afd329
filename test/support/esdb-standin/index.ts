/**
 * An in-process stand-in for a single insecure EventStoreDB node, for tests on machines
 * where no server can run. It is a protocol peer built from the service definitions the
 * client package ships (generated/*_grpc_pb), so the real @eventstore/db-client talks
 * to it over real gRPC; it does not know about our adapter.
 *
 * Served: Streams.Append, Streams.Read (stream and $all reads, catch-up subscriptions
 * with filters, checkpoints and caught_up). ServerFeatures.GetSupportedMethods answers
 * UNIMPLEMENTED, which makes the client use plain Append rather than BatchAppend. No
 * gossip: `esdb://host:port` without `+discover` connects to the one node directly.
 */
import { randomUUID } from 'crypto';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { ServerFeaturesService } from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import { StreamsService } from '@eventstore/db-client/generated/streams_grpc_pb';
import { rpcError } from './protocol';
import { createStreamsService } from './streams-service';
import type { StandInStats } from './streams-service';
import { TransactionLog } from './transaction-log';

export interface EventStoreDbStandInOptions {
  /**
   * Like a node writing its own bookkeeping into $all: when set, a `$statsCollected`
   * event lands in a `$stats-…` stream at this interval. A `$ProjectionsInitialized`
   * event is always written at start, so $all is never empty of system events.
   */
  systemEventIntervalMs?: number;
}

export type { StandInStats } from './streams-service';

export interface EventStoreDbStandIn {
  connectionString: string;
  /** Live counters of what the stand-in has served; read them before and after. */
  stats: Readonly<StandInStats>;
  stop(): Promise<void>;
}

export async function startEventStoreDbStandIn(
  options: EventStoreDbStandInOptions = {},
): Promise<EventStoreDbStandIn> {
  const log = new TransactionLog();
  const stats: StandInStats = { allEventsRead: 0 };
  appendSystemEvent(log, '$projections-$all', '$ProjectionsInitialized');

  const server = new Server();
  server.addService(StreamsService, createStreamsService(log, stats));
  server.addService(ServerFeaturesService, {
    getSupportedMethods: (_call: unknown, callback: (error: Error) => void) =>
      callback(rpcError(status.UNIMPLEMENTED, 'Server features are not served by the EventStoreDB stand-in')),
  });

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort),
    ),
  );

  const timer = options.systemEventIntervalMs
    ? setInterval(
        () => appendSystemEvent(log, `$stats-127.0.0.1:${port}`, '$statsCollected'),
        options.systemEventIntervalMs,
      )
    : undefined;
  timer?.unref();

  let stopped: Promise<void> | undefined;
  return {
    connectionString: `esdb://127.0.0.1:${port}?tls=false`,
    stats,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (timer) clearInterval(timer);
        // Cancels open reads and subscriptions, as a node going down would.
        server.forceShutdown();
        resolve();
      });
      return stopped;
    },
  };
}

function appendSystemEvent(log: TransactionLog, streamName: string, type: string): void {
  log.append(streamName, { kind: 'any' }, [
    {
      id: randomUUID(),
      type,
      contentType: 'application/json',
      data: Buffer.from(JSON.stringify({ at: new Date().toISOString() })),
      customMetadata: new Uint8Array(),
    },
  ]);
}
