import { DynamicModule, FactoryProvider, Global, Module, ModuleMetadata, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BullModule, WorkerHost } from '@nestjs/bullmq';
// Not re-exported by the package index; it is the key @Processor() stores its worker options under.
import { WORKER_METADATA } from '@nestjs/bullmq/dist/bull.constants';
import type { WorkerOptions } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../config/config';
import { DEFAULT_JOB_OPTIONS } from '../reactors/reactor';
import { bullConnection } from '../redis/redis';
import { QueueBoardModule } from './queue-board.module';

/**
 * Stalled-job recovery: a worker holds a lock on its job for `lockDuration` and renews
 * it at half that while the job runs. When the worker dies the lock expires, and the
 * next stalled check (every `stalledInterval`, by any live worker) moves the job back
 * to waiting, so it runs again elsewhere. A job that stalls more than
 * `maxStalledCount` times (one that kills its worker) is failed for an operator.
 */
export function queueWorkerOptions(
  config: AppConfig,
): Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount'> {
  return {
    lockDuration: config.queueLockDurationMs,
    stalledInterval: config.queueStalledIntervalMs,
    maxStalledCount: config.queueMaxStalledCount,
  };
}

/**
 * BullMQ for the whole application: one connection setting, one key prefix (so test
 * files and deployments sharing a Redis never meet), one set of job defaults. Also
 * mounts the operators' board where the process serves HTTP.
 */
@Global()
@Module({})
export class QueuesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: QueuesModule,
      imports: [
        BullModule.forRoot({
          connection: bullConnection(config.redisUrl),
          prefix: config.redisPrefix,
          defaultJobOptions: DEFAULT_JOB_OPTIONS,
        }),
        QueueBoardModule.forRoot(config),
      ],
      exports: [BullModule],
    };
  }
}

export interface QueueFeature {
  /** Queue names this feature produces to (injectable with @InjectQueue(name)). */
  queues?: readonly string[];
  /** @Processor() classes extending WorkerHost; they consume only where ROLE is not `api`. */
  processors?: readonly Type<WorkerHost>[];
}

/**
 * A feature's queues and processors in one line:
 *
 *   @Module(withQueues({ queues: [SMS_QUEUE], processors: [SmsProcessor] }, { providers: [...] }))
 *
 * The processors stay providers of the feature's own module, so they can inject its
 * services; in a ROLE=api process they resolve to null, so @nestjs/bullmq starts no
 * worker there and the API never consumes a job.
 */
export function withQueues(feature: QueueFeature, metadata: ModuleMetadata = {}): ModuleMetadata {
  const queues = feature.queues ?? [];
  return {
    ...metadata,
    imports: [
      ...(metadata.imports ?? []),
      ...(queues.length ? [BullModule.registerQueue(...queues.map((name) => ({ name })))] : []),
    ],
    providers: [...(metadata.providers ?? []), ...(feature.processors ?? []).map(processorProvider)],
    exports: [...(metadata.exports ?? []), ...(queues.length ? [BullModule] : [])],
  };
}

function processorProvider(type: Type<WorkerHost>): FactoryProvider {
  return {
    provide: type,
    inject: [APP_CONFIG, ModuleRef],
    useFactory: async (config: AppConfig, ref: ModuleRef): Promise<WorkerHost | null> => {
      if (config.role === 'api') return null;
      return ref.create(withWorkerDefaults(type, config));
    },
  };
}

/**
 * The explorer of @nestjs/bullmq takes worker options only from @Processor() metadata,
 * so the configured lock and stalled settings go on a per-application subclass (the
 * class's own options win). A subclass, not the class itself: two applications in one
 * process (tests) may be configured differently.
 */
function withWorkerDefaults(type: Type<WorkerHost>, config: AppConfig): Type<WorkerHost> {
  const declared = (Reflect.getMetadata(WORKER_METADATA, type) ?? {}) as WorkerOptions;
  const Configured = class extends (type as unknown as new (...args: unknown[]) => object) {};
  Object.defineProperty(Configured, 'name', { value: type.name });
  Reflect.defineMetadata(WORKER_METADATA, { ...queueWorkerOptions(config), ...declared }, Configured);
  return Configured as unknown as Type<WorkerHost>;
}
