import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'account_uuid' }) accountUuid: string;
  @Column('text') name: string;
  @Column('text') prefix: string;
  @Column('text', { name: 'secret_hash' }) secretHash: string;
  @Column('text', { array: true }) scopes: string[];
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
}
