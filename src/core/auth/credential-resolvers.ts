import { Injectable, OnModuleInit, SetMetadata } from '@nestjs/common';
import * as crypto from 'node:crypto';
import { DiscoveryService } from '@nestjs/core';
import { AuthCache } from './auth-cache';
import { Credential, CredentialResolver } from './principal';

export const CREDENTIAL_PREFIX = 'auth:credential-prefix';

/**
 * A token's SHA-256 (base64), its cache key: node's one-shot `crypto.hash` (20.12+) where
 * there is one, half the cost of a Hash object on every authenticated request.
 */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'base64')
    : (text) => crypto.createHash('sha256').update(text).digest('base64');

/**
 * Marks a provider as the resolver of bearer tokens starting with `prefix`
 * (`wsk_` API keys, `wsm_` member tokens, `wso_` OAuth access tokens).
 */
export const ResolvesCredentialsWithPrefix = (prefix: string): ClassDecorator =>
  SetMetadata(CREDENTIAL_PREFIX, prefix);

/**
 * Dispatches a bearer token to the feature that issued it, by its prefix, and keeps what
 * it resolved to in the AuthCache (keyed by the token's SHA-256, never the token), until
 * an event changes it, AUTH_CACHE_TTL_MS, or the credential's expiry.
 */
@Injectable()
export class PrefixCredentialResolver implements CredentialResolver, OnModuleInit {
  private readonly resolvers = new Map<string, CredentialResolver>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly cache: AuthCache,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      if (!wrapper.metatype || !wrapper.instance) continue;
      const prefix = Reflect.getMetadata(CREDENTIAL_PREFIX, wrapper.metatype) as string | undefined;
      if (!prefix) continue;
      if (this.resolvers.has(prefix)) throw new Error(`Two credential resolvers claim the prefix ${prefix}`);
      this.resolvers.set(prefix, wrapper.instance as CredentialResolver);
    }
  }

  async resolve(token: string): Promise<Credential | undefined> {
    for (const [prefix, resolver] of this.resolvers) {
      if (!token.startsWith(prefix)) continue;
      const key = `credential:${sha256(token)}`;
      const credential = await this.cache.get(
        key,
        () => resolver.resolve(token),
        (c) => c.expiresAt ?? Infinity,
      );
      // The assistant acting as an agent member is built in-process (assistantCredential):
      // no token may stand for it, whichever resolver answered.
      return credential?.kind === 'assistant' ? undefined : credential;
    }
    return undefined;
  }
}
