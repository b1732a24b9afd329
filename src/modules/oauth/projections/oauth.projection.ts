import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { AccountPasswordEvent, OAuthAppEvent, OAuthGrantEvent } from '../domain/oauth.events';

type Handled = AccountPasswordEvent | OAuthAppEvent | OAuthGrantEvent;

/**
 * The authorization server's read models: password hashes, apps and grants. Deleting an
 * app revokes its grants here, so its tokens stop with the same commit. Who may sign in
 * with which email is identity's (FindAccountsByRegisteredEmailQuery): a signup's events
 * cause no transaction of this projection.
 */
@Injectable()
@Projection({
  name: 'oauth',
  eventTypes: [
    'AccountPasswordSet',
    'OAuthAppCreated',
    'OAuthAppUpdated',
    'OAuthAppSecretRotated',
    'OAuthAppDeleted',
    'OAuthGrantApproved',
    'OAuthGrantRevoked',
  ],
  tables: ['oauth_passwords', 'oauth_apps', 'oauth_grants'],
})
export class OAuthProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as Handled;
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'AccountPasswordSet': {
        const d = event.data;
        await em.query(
          `INSERT INTO oauth_passwords (account_uuid, password_hash, set_at) VALUES ($1, $2, $3)
           ON CONFLICT (account_uuid) DO UPDATE SET password_hash = excluded.password_hash, set_at = excluded.set_at`,
          [d.accountUuid, d.passwordHash, d.setAt],
        );
        return;
      }
      case 'OAuthAppCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO oauth_apps (id, client_id, account_uuid, name, redirect_uris, scopes, mcp_server_url,
             client_type, secret_hash, registered_dynamically, created_at, updated_at, version, stream_revision)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, 1, $12)
           ON CONFLICT (id) DO NOTHING`,
          [
            d.appId,
            d.clientId,
            d.accountUuid,
            d.name,
            d.redirectUris,
            d.scopes,
            d.mcpServerUrl,
            d.clientType,
            d.secretHash,
            d.registeredDynamically,
            d.createdAt,
            revision,
          ],
        );
        return;
      }
      case 'OAuthAppUpdated': {
        const d = event.data;
        await em.query(
          `UPDATE oauth_apps SET name = $2, redirect_uris = $3, scopes = $4, updated_at = $5,
             version = version + 1, stream_revision = $6 WHERE id = $1`,
          [d.appId, d.name, d.redirectUris, d.scopes, d.updatedAt, revision],
        );
        return;
      }
      case 'OAuthAppSecretRotated': {
        const d = event.data;
        await em.query(
          `UPDATE oauth_apps SET secret_hash = $2, updated_at = $3, version = version + 1, stream_revision = $4
            WHERE id = $1`,
          [d.appId, d.secretHash, d.rotatedAt, revision],
        );
        return;
      }
      case 'OAuthAppDeleted': {
        const d = event.data;
        await em.query(
          `UPDATE oauth_apps SET deleted_at = $2, version = version + 1, stream_revision = $3 WHERE id = $1`,
          [d.appId, d.deletedAt, revision],
        );
        await em.query(
          `UPDATE oauth_grants SET revoked_at = $2, revoke_reason = 'app_deleted' WHERE app_id = $1 AND revoked_at IS NULL`,
          [d.appId, d.deletedAt],
        );
        return;
      }
      case 'OAuthGrantApproved': {
        const d = event.data;
        await em.query(
          `INSERT INTO oauth_grants (id, app_id, account_uuid, workspace_id, scopes, created_at)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
          [d.grantId, d.appId, d.accountUuid, d.workspaceId, d.scopes, d.approvedAt],
        );
        return;
      }
      case 'OAuthGrantRevoked': {
        const d = event.data;
        await em.query(
          `UPDATE oauth_grants SET revoked_at = $2, revoke_reason = $3 WHERE id = $1 AND revoked_at IS NULL`,
          [d.grantId, d.revokedAt, d.reason],
        );
        return;
      }
    }
  }
}
