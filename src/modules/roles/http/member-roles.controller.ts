import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { CreateMemberRoleCommand } from '../commands/create-member-role.command';
import { DeleteMemberRoleCommand } from '../commands/delete-member-role.command';
import { MergeMemberRolesCommand } from '../commands/merge-member-roles.command';
import {
  SetDefaultMemberRoleCommand,
  SetDefaultMemberRoleHandler,
} from '../commands/set-default-member-role.command';
import { UpdateMemberRoleCommand } from '../commands/update-member-role.command';
import type { MemberRolesMerged } from '../domain/member-role';
import { GetMemberRoleQuery, ListMemberRolesQuery } from '../queries/member-role.queries';
import {
  CreateMemberRoleDto,
  MemberRoleListResponse,
  MemberRoleResponse,
  MemberRolesMergedResponse,
  MergeMemberRolesDto,
  UpdateMemberRoleDto,
} from './member-role.dto';

/** A path role id that is not a positive integer names no role: 404, as for members and API keys. */
function roleIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new NotFoundError('Role not found');
  return Number(raw);
}

@ApiTags('member-roles')
@Controller('w/:wid/member-roles')
export class MemberRolesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly defaults: SetDefaultMemberRoleHandler,
    private readonly db: DataSource,
  ) {}

  /**
   * If-Match against the role's row in this workspace: the stream revision to pin the
   * write to (undefined without If-Match), 412 if the role changed since that version.
   */
  private async pinnedRevision(
    workspaceId: string,
    roleId: number,
    ifMatch: number[] | undefined,
  ): Promise<bigint | undefined> {
    return pinnedRevision(this.db, ifMatch, {
      table: 'member_roles',
      id: roleId,
      workspaceId,
      notFound: () => new NotFoundError('Role not found'),
    });
  }

  @Get()
  @RequireScope('member_roles:read')
  @ApiOkResponse({ type: MemberRoleListResponse })
  list(@Param('wid') wid: string, @Query() query: PageQueryDto): Promise<MemberRoleListResponse> {
    return this.queries.execute(new ListMemberRolesQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Post()
  @RequireScope('member_roles:write')
  @CreatedLocation<MemberRoleResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/member-roles/${seg(r.id)}`)
  @ApiCreatedResponse({ type: MemberRoleResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateMemberRoleDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MemberRoleResponse> {
    const workspaceId = wid.toLowerCase();
    const { isDefault, ...input } = body;
    const granter = principal.effectiveScopes;
    const roleId = await this.commands.execute<CreateMemberRoleCommand, number>(
      new CreateMemberRoleCommand(workspaceId, input, granter),
    );
    if (isDefault)
      await this.commands.execute(new SetDefaultMemberRoleCommand(workspaceId, roleId, true, granter));
    return this.queries.execute(new GetMemberRoleQuery(workspaceId, roleId));
  }

  @Get(':roleId')
  @RequireScope('member_roles:read')
  @ApiOkResponse({ type: MemberRoleResponse })
  get(@Param('wid') wid: string, @Param('roleId') roleId: string): Promise<MemberRoleResponse> {
    return this.queries.execute(new GetMemberRoleQuery(wid.toLowerCase(), roleIdOf(roleId)));
  }

  @Put(':roleId')
  @RequireScope('member_roles:write')
  @ApiOkResponse({ type: MemberRoleResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('roleId') rawRoleId: string,
    @Body() body: UpdateMemberRoleDto,
    @CurrentPrincipal() principal: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<MemberRoleResponse> {
    const workspaceId = wid.toLowerCase();
    const roleId = roleIdOf(rawRoleId);
    const expectedRevision = await this.pinnedRevision(workspaceId, roleId, ifMatch);
    const { isDefault, ...changes } = body;
    const granter = principal.effectiveScopes;
    const setDefault =
      isDefault === undefined
        ? undefined
        : new SetDefaultMemberRoleCommand(workspaceId, roleId, isDefault, granter);
    // Refuse a forbidden default before anything is written, so a refusal changes nothing.
    if (setDefault) await this.defaults.check(setDefault);
    await this.commands.execute(
      new UpdateMemberRoleCommand(workspaceId, roleId, changes, granter, expectedRevision),
    );
    if (setDefault) await this.commands.execute(setDefault);
    return this.queries.execute(new GetMemberRoleQuery(workspaceId, roleId));
  }

  @Delete(':roleId')
  @RequireScope('member_roles:admin')
  @HttpCode(204)
  @ApiNoContentResponse({
    description: 'deleted; refused with 409 while members, invitations or the workspace default refer to it',
  })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('roleId') rawRoleId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const roleId = roleIdOf(rawRoleId);
    const expectedRevision = await this.pinnedRevision(workspaceId, roleId, ifMatch);
    await this.commands.execute(new DeleteMemberRoleCommand(workspaceId, roleId, expectedRevision));
  }

  @Post(':roleId/merge')
  @RequireScope('member_roles:admin')
  @HttpCode(200)
  @ApiOkResponse({
    type: MemberRolesMergedResponse,
    description: 'the duplicate is gone; its members and references are on the target',
  })
  async merge(
    @Param('wid') wid: string,
    @Param('roleId') roleId: string,
    @Body() body: MergeMemberRolesDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<MemberRolesMergedResponse> {
    const workspaceId = wid.toLowerCase();
    const merged = await this.commands.execute<MergeMemberRolesCommand, MemberRolesMerged['data']>(
      new MergeMemberRolesCommand(
        workspaceId,
        roleIdOf(roleId),
        body.targetRoleId,
        body.resourceAccess ?? 'copy',
        principal.effectiveScopes,
      ),
    );
    const targetRole = await this.queries.execute<GetMemberRoleQuery, MemberRoleResponse>(
      new GetMemberRoleQuery(workspaceId, merged.targetRoleId),
    );
    return {
      sourceRoleId: merged.sourceRoleId,
      targetRoleId: merged.targetRoleId,
      resourceAccess: merged.resourceAccess,
      memberIds: merged.memberIds,
      invitationIds: merged.invitationIds,
      workspaceDefaultMoved: merged.workspaceDefaultMoved,
      targetRole,
    };
  }
}
