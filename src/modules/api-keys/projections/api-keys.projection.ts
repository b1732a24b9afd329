import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { ApiKeyEvent } from '../domain/api-key';
import { ApiKeyEntity } from './api-key.entity';

/** API keys by prefix, for the credential resolver and the owner's list. Last use is kept apart (api_key_usage). */
@Injectable()
@Projection({ name: 'api-keys', eventTypes: ['ApiKeyCreated', 'ApiKeyRevoked'], tables: ['api_keys'] })
export class ApiKeysProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as ApiKeyEvent;
    const repo = em.getRepository(ApiKeyEntity);
    switch (event.type) {
      case 'ApiKeyCreated': {
        const d = event.data;
        await repo.upsert(
          {
            id: d.keyId,
            accountUuid: d.accountUuid,
            name: d.name,
            prefix: d.prefix,
            secretHash: d.secretHash,
            scopes: d.scopes,
            createdAt: new Date(d.createdAt),
            expiresAt: new Date(d.expiresAt),
            revokedAt: null,
          },
          ['id'],
        );
        return;
      }
      case 'ApiKeyRevoked':
        await repo.update({ id: event.data.keyId }, { revokedAt: new Date(event.data.revokedAt) });
        return;
    }
  }
}
