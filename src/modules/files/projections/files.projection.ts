import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { FileEvent } from '../domain/file';
import { FileEntity } from './file.entity';

/** The files read model: every file not deleted, with its version (the ETag). */
@Injectable()
@Projection({ name: 'files', eventTypes: ['FileUploaded', 'FileDeleted'], tables: ['files'] })
export class FilesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as FileEvent;
    const repo = em.getRepository(FileEntity);
    switch (event.type) {
      case 'FileUploaded': {
        const d = event.data;
        await repo.upsert(
          {
            id: d.fileId,
            workspaceId: d.workspaceId,
            name: d.name,
            contentType: d.contentType,
            size: d.size,
            sha256: d.sha256,
            storageKey: d.storageKey,
            stagingKey: d.stagingKey,
            createdAt: new Date(d.createdAt),
            version: 1,
            streamRevision: stored.revision.toString(),
          },
          ['id'],
        );
        return;
      }
      case 'FileDeleted':
        await repo.delete({ id: event.data.fileId });
        return;
    }
  }
}
