import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { DiscoveryModule } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { PrefixCredentialResolver } from './auth/credential-resolvers';
import { CREDENTIAL_RESOLVER } from './auth/principal';
import { EventSourcedRepository } from './cqrs/event-sourced-repository';
import { RequestContextInterceptor } from './cqrs/request-context.interceptor';
import { ETagInterceptor } from './http/preconditions';
import { AuthCache } from './auth/auth-cache';
import { CheckpointFeed } from './projections/checkpoint-feed';
import { ConsistencyWaiter } from './projections/consistency';
import { SubscriberRegistry } from './projections/subscriber-registry';
import { SubscribersHost } from './projections/subscribers.host';

/** Commands, queries, projections, reactors and read-your-writes, shared by every feature. */
@Global()
@Module({
  imports: [CqrsModule.forRoot(), DiscoveryModule],
  providers: [
    EventSourcedRepository,
    SubscriberRegistry,
    SubscribersHost,
    ConsistencyWaiter,
    CheckpointFeed,
    AuthCache,
    { provide: APP_INTERCEPTOR, useClass: RequestContextInterceptor },
    { provide: APP_INTERCEPTOR, useClass: ETagInterceptor },
    { provide: CREDENTIAL_RESOLVER, useClass: PrefixCredentialResolver },
  ],
  exports: [
    CREDENTIAL_RESOLVER,
    CqrsModule,
    EventSourcedRepository,
    SubscriberRegistry,
    ConsistencyWaiter,
    CheckpointFeed,
    AuthCache,
  ],
})
export class SpineModule {}
