import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { PrefixCredentialResolver } from './auth/credential-resolvers';
import { CREDENTIAL_RESOLVER } from './auth/principal';
import { ADMITTED_REQUEST_HOOK } from './auth/auth.guard';
import { CLAIMS } from './claims/claims';
import { createClaims } from './claims/claims.factory';
import { EventSourcedRepository } from './cqrs/event-sourced-repository';
import { ReadYourWritesBuses } from './cqrs/read-your-writes';
import { ReferenceGate } from './cqrs/reference-gate';
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
    ReferenceGate,
    // Run by the guard once it let a request through: a replay skips the rest
    // (the request context and read-your-writes are Fastify hooks: core/cqrs/request-context.hooks.ts).
    IdempotencyInterceptor,
    { provide: ADMITTED_REQUEST_HOOK, useExisting: IdempotencyInterceptor },
    { provide: CREDENTIAL_RESOLVER, useClass: PrefixCredentialResolver },
  ],
  exports: [
    ADMITTED_REQUEST_HOOK,
    CLAIMS,
    CREDENTIAL_RESOLVER,
    CqrsModule,
    EventSourcedRepository,
    SubscriberRegistry,
    ConsistencyWaiter,
    CheckpointFeed,
    AuthCache,
    ReferenceGate,
  ],
})
export class SpineModule {}
