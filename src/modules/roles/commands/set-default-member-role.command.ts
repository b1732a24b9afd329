import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { UpdateWorkspaceCommand } from '../../workspaces';
import { RoleReferences } from '../queries/role-references';
import { DefaultRoleCheck } from './default-role-check';

export class SetDefaultMemberRoleCommand {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
    readonly isDefault: boolean,
    /** The caller's effective scopes in the workspace: the default cannot grant more. */
    readonly granter: readonly string[],
  ) {}
}

/**
 * `isDefault` on a role is the workspace setting defaultMemberRoleId seen from the
 * role: marking a role writes the setting (WorkspaceUpdated on the workspace stream);
 * unmarking the current default falls back to the built-in User role (its id is written).
 */
@CommandHandler(SetDefaultMemberRoleCommand)
export class SetDefaultMemberRoleHandler implements ICommandHandler<SetDefaultMemberRoleCommand> {
  constructor(
    private readonly commands: CommandBus,
    private readonly refs: RoleReferences,
    private readonly eligible: DefaultRoleCheck,
  ) {}

  /** The checks alone, so a request can refuse before it changes anything else. Returns the setting to write, if any. */
  async check(cmd: SetDefaultMemberRoleCommand): Promise<number | null | undefined> {
    const role = await this.refs.role(cmd.workspaceId, cmd.roleId);
    if (!role) throw new NotFoundError('Role not found');
    const current = await this.refs.effectiveDefaultRoleId(cmd.workspaceId);
    if (cmd.isDefault) {
      await this.eligible.assertEligible(cmd.workspaceId, cmd.roleId, 'isDefault', cmd.granter);
      return current === role.roleId ? undefined : role.roleId;
    }
    if (current !== role.roleId) return undefined;
    if (role.builtIn === 'user') {
      throw new ValidationError(
        'isDefault: the built-in User role is the default whenever no other role is; mark another role as the default instead',
      );
    }
    // The setting always names the actual default role, so unmarking writes User's id, not null.
    return (await this.refs.builtInRoleId(cmd.workspaceId, 'user')) ?? null;
  }

  async execute(cmd: SetDefaultMemberRoleCommand): Promise<void> {
    const next = await this.check(cmd);
    if (next === undefined) return;
    await this.commands.execute(
      new UpdateWorkspaceCommand(cmd.workspaceId, { settings: { defaultMemberRoleId: next } }, cmd.granter),
    );
  }
}
