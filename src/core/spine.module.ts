import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { DiscoveryModule } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { PrefixCredentialResolver } from './auth/credential-resolvers';
import { CREDENTIAL_RESOLVER } from './auth/principal';
import { CLAIMS } from './claims/claims';
import { createClaims } from './claims/claims.factory';
import { EventSourcedRepository } from './cqrs/event-sourced-repository';
import { ReadYourWritesBuses } from './cqrs/read-your-writes';
import { RequestContextInterceptor } from './cqrs/request-context.interceptor';
import { EVENT_STORE } from './event-store/event-store.port';
import { IdempotencyInterceptor } from './http/idempotency';
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
    { provide: CLAIMS, useFactory: createClaims, inject: [EVENT_STORE, DataSource] },
    EventSourcedRepository,
    SubscriberRegistry,
    SubscribersHost,
    ConsistencyWaiter,
    CheckpointFeed,
    AuthCache,
    ReadYourWritesBuses,
    // Run by RequestContextInterceptor, around the rest: a replay skips it all.
    IdempotencyInterceptor,
    { provide: APP_INTERCEPTOR, useClass: RequestContextInterceptor },
    { provide: CREDENTIAL_RESOLVER, useClass: PrefixCredentialResolver },
  ],
  exports: [
    CLAIMS,
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
