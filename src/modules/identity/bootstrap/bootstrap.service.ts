import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { CreatedRootApiKey, CreateRootApiKeyCommand } from '../../api-keys';
import { BuiltInRoleIds, CreateBuiltInRolesCommand } from '../../roles';
import { checkWorkspaceName, CreateWorkspaceCommand } from '../../workspaces';
import { normalizeEmail } from '../domain/contact';
import { memberClaim } from '../domain/member-claims';
import { AccountRegistered, accountStream, MemberCreated, memberStream } from '../domain/identity.events';

export interface BootstrapResult {
  workspaceId: string;
  accountUuid: string;
  memberId: number;
  apiKey: string;
}

/**
 * Creates a workspace with its built-in roles, its first account and member (Manager)
 * and an API key for that member, composing each feature's public command; the account
 * and member are identity's own. Every step is an event; the key's secret is returned
 * once and only its hash is stored.
 */
@Injectable()
export class BootstrapService {
  constructor(
    private readonly commands: CommandBus,
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async bootstrap(input: { workspaceName: string; email: string }): Promise<BootstrapResult> {
    const email = normalizeEmail(input.email, 'email');
    // Checked before the roles are created, so a bad name leaves no events behind.
    checkWorkspaceName(input.workspaceName);
    const now = new Date().toISOString();
    const workspaceId = randomUUID();
    // Roles first, so the workspace is created naming its real default role (User): its
    // defaultMemberRoleId and the roles' isDefault then show one truth from the start.
    const roleIds = await this.commands.execute<CreateBuiltInRolesCommand, BuiltInRoleIds>(
      new CreateBuiltInRolesCommand(workspaceId),
    );
    await this.commands.execute(
      new CreateWorkspaceCommand(workspaceId, input.workspaceName, { defaultMemberRoleId: roleIds.user }),
    );

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
        memberRoleId: roleIds.manager,
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

    const { secret } = await this.commands.execute<CreateRootApiKeyCommand, CreatedRootApiKey>(
      new CreateRootApiKeyCommand(accountUuid, workspaceId),
    );
    return { workspaceId, accountUuid, memberId, apiKey: secret };
  }
}
