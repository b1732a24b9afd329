import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { ACCOUNT_ADMIN, ALL_SCOPES } from '../../../core/auth/scopes';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ValidationError } from '../../../core/http/domain-errors';
import { streamOf, workspaceDecider } from '../../workspaces/domain/workspace';
import { newApiKeySecret } from '../domain/api-key-secret';
import { memberClaim } from '../domain/member-claims';
import { BUILT_IN_ROLES } from '../domain/built-in-roles';
import {
  AccountRegistered,
  accountStream,
  ApiKeyCreated,
  apiKeyStream,
  MemberCreated,
  MemberRoleCreated,
  memberRoleStream,
  memberStream,
} from '../domain/identity.events';

export interface BootstrapResult {
  workspaceId: string;
  accountUuid: string;
  memberId: number;
  apiKey: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/**
 * The longest a key may live (API keys: 1 to 365 days): keys cannot outlive the key that
 * creates them, so a shorter bootstrap key would cap every key of the account below it.
 */
const BOOTSTRAP_KEY_DAYS = 365;

/**
 * Creates a workspace with its built-in roles, its first account and member (Manager)
 * and an API key for that member. Every step is an event; the key's secret is
 * returned once and only its hash is stored.
 */
@Injectable()
export class BootstrapService {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async bootstrap(input: { workspaceName: string; email: string }): Promise<BootstrapResult> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new ValidationError('email: must be an email address');
    const now = new Date().toISOString();
    const workspaceId = randomUUID();
    // Role ids first, so the workspace is created naming its real default role (User):
    // its defaultMemberRoleId and the roles' isDefault then show one truth from the start.
    const roleIds = new Map<string, number>();
    for (const role of BUILT_IN_ROLES) roleIds.set(role.key, await nextId(this.db, 'member_role_id_seq'));
    await this.repo.handle({
      streamName: streamOf(workspaceId),
      workspaceId,
      decider: workspaceDecider,
      command: {
        type: 'CreateWorkspace',
        workspaceId,
        name: input.workspaceName,
        settings: { defaultMemberRoleId: roleIds.get('user')! },
        now,
      },
    });

    const managerRoleId = roleIds.get('manager')!;
    for (const role of BUILT_IN_ROLES) {
      const roleId = roleIds.get(role.key)!;
      const event: MemberRoleCreated = {
        type: 'MemberRoleCreated',
        data: {
          roleId,
          workspaceId,
          name: role.name,
          permissions: [...role.permissions],
          builtIn: role.key,
          createdAt: now,
        },
      };
      await this.repo.append(memberRoleStream(roleId), workspaceId, [event], 'no_stream');
    }

    const existing = (await this.db.query(
      `SELECT uuid FROM accounts WHERE email = $1 ORDER BY created_at LIMIT 1`,
      [email],
    )) as {
      uuid: string;
    }[];
    const accountUuid = existing[0]?.uuid ?? randomUUID();
    if (!existing.length) {
      const account: AccountRegistered = {
        type: 'AccountRegistered',
        data: { accountUuid, email, phone: null, name: null, createdAt: now },
      };
      await this.repo.append(accountStream(accountUuid), workspaceId, [account], 'no_stream');
    }

    const memberId = await nextId(this.db, 'member_id_seq');
    const member: MemberCreated = {
      type: 'MemberCreated',
      data: {
        memberId,
        workspaceId,
        accountUuid,
        email,
        phone: null,
        name: null,
        externalId: null,
        memberRoleId: managerRoleId,
        kind: 'person',
        notifySms: false,
        notifyEmail: false,
        notifyVoice: false,
        createdAt: now,
      },
    };
    // The first member holds its email like any member does, so a later signup with it finds this member.
    await this.repo.appendClaimed(memberStream(memberId), workspaceId, [member], 'no_stream', {
      take: [memberClaim(workspaceId, 'email', email)],
    });

    const { prefix, secret, hash } = newApiKeySecret();
    const keyId = uuidv7();
    const key: ApiKeyCreated = {
      type: 'ApiKeyCreated',
      data: {
        keyId,
        accountUuid,
        name: 'bootstrap',
        prefix,
        secretHash: hash,
        // The account's root credential: every workspace scope, and account:admin to manage its keys.
        scopes: [...ALL_SCOPES, ACCOUNT_ADMIN],
        createdAt: now,
        expiresAt: new Date(Date.now() + BOOTSTRAP_KEY_DAYS * 86_400_000).toISOString(),
      },
    };
    await this.repo.append(apiKeyStream(keyId), workspaceId, [key], 'no_stream');
    return { workspaceId, accountUuid, memberId, apiKey: secret };
  }
}
