import { Injectable, OnModuleInit, SetMetadata } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Credential, CredentialResolver } from './principal';

export const CREDENTIAL_PREFIX = 'auth:credential-prefix';

/**
 * Marks a provider as the resolver of bearer tokens starting with `prefix`
 * (`wsk_` API keys, `wsm_` member tokens, `wso_` OAuth access tokens).
 */
export const ResolvesCredentialsWithPrefix = (prefix: string): ClassDecorator =>
  SetMetadata(CREDENTIAL_PREFIX, prefix);

/** Dispatches a bearer token to the feature that issued it, by its prefix. */
@Injectable()
export class PrefixCredentialResolver implements CredentialResolver, OnModuleInit {
  private readonly resolvers = new Map<string, CredentialResolver>();

  constructor(private readonly discovery: DiscoveryService) {}

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
      if (token.startsWith(prefix)) return resolver.resolve(token);
    }
    return undefined;
  }
}
