import { Global, Module } from '@nestjs/common';
import { RateLimiter } from './rate-limiter';

/** The shared rate limiter; the authentication guard admits each request through it. */
@Global()
@Module({ providers: [RateLimiter], exports: [RateLimiter] })
export class RateLimitModule {}
