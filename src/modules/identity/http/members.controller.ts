import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { KeptRead, PeekedVersion } from '../../../core/http/kept-reads';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision, withVersion } from '../../../core/http/preconditions';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { ImportMembersCommand, ImportResult } from '../commands/import-members.command';
import {
  ArchiveMemberCommand,
  RevokeMemberTokensCommand,
  UpdateMemberCommand,
} from '../commands/member.commands';
import type { UpdateOutcome } from '../commands/member-writer.service';
import { MemberVersions } from '../projections/member-versions';
import { normalizeEmail, normalizePhone } from '../domain/contact';
import { GetMemberQuery, ListMembersQuery, MemberListBytes } from '../queries/member.queries';
import { KEPT_MEMBER_LIST } from '../projections/member-list-announcer';
import { callerOf, memberIdOf, visibilityOf } from './caller';
import {
  ImportMembersDto,
  ImportMembersResponse,
  ListMembersQueryDto,
  MemberListResponse,
  MemberResponse,
  UpdateMemberDto,
} from './dto/member.dto';

@ApiTags('members')
@Controller('w/:wid/members')
export class MembersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
    private readonly waiter: ConsistencyWaiter,
    private readonly versions: MemberVersions,
  ) {}

  /**
   * If-Match: the member stream revision the write must find, or undefined without the
   * header. Visibility and permission come first, so a 412 never tells a caller about a
   * member it may not see or change.
   */
  private async pinnedRevision(
    workspaceId: string,
    memberId: number,
    ifMatch: number[] | undefined,
    p: Principal,
    scope: string,
  ): Promise<bigint | undefined> {
    if (ifMatch === undefined) return undefined;
    await this.queries.execute(
      new GetMemberQuery(workspaceId, memberId, visibilityOf(p), { caller: callerOf(p), scope }),
    );
    return pinnedRevision(this.db, ifMatch, {
      table: 'members',
      id: memberId,
      workspaceId,
      notFound: () => new NotFoundError('Member not found'),
    });
  }

  /**
   * The body comes as JSON from PostgreSQL (ListMembersHandler), kept as its UTF-8 bytes and
   * sent as they are; the list version a kept page is checked against comes with the rate
   * limiter's admission (@KeptRead).
   */
  @Get()
  @RequireScope('members:read')
  @KeptRead(KEPT_MEMBER_LIST, 'wid')
  @Header('content-type', 'application/json; charset=utf-8')
  @ApiOkResponse({ type: MemberListResponse })
  list(
    @Param('wid') wid: string,
    @Query() q: ListMembersQueryDto,
    @CurrentPrincipal() p: Principal,
    @PeekedVersion() peeked: string | null | undefined,
  ): Promise<MemberListBytes> {
    if (q.roleId !== undefined && q.memberRoleId !== undefined && q.roleId !== q.memberRoleId)
      throw new ValidationError('memberRoleId: differs from roleId (give one of them, or the same value)');
    const filters = {
      email: q.email !== undefined ? normalizeEmail(q.email, 'email') : undefined,
      phone: q.phone !== undefined ? normalizePhone(q.phone, 'phone') : undefined,
      externalId: q.externalId,
      roleId: q.roleId ?? q.memberRoleId,
      status: q.status ?? 'active',
    };
    return this.queries.execute(
      new ListMembersQuery(wid.toLowerCase(), filters, visibilityOf(p), toPageRequest(q), peeked, true),
    );
  }

  @Post('import')
  @RequireScope('members:write')
  @HttpCode(200)
  @ApiOkResponse({
    type: ImportMembersResponse,
    description: 'per-row results; a failed row does not fail the others',
  })
  import(
    @Param('wid') wid: string,
    @Body() body: ImportMembersDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<ImportResult> {
    return this.commands.execute(
      new ImportMembersCommand(wid.toLowerCase(), body.members, body.upsert ?? false, callerOf(p)),
    );
  }

  @Get(':memberId')
  @RequireScope('members:read')
  @SelfAccess()
  @ApiOkResponse({ type: MemberResponse })
  async get(
    @Param('wid') wid: string,
    @Param('memberId') rawId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<MemberResponse> {
    const memberId = memberIdOf(rawId);
    return this.queries.execute<GetMemberQuery, MemberResponse>(
      new GetMemberQuery(wid.toLowerCase(), memberId, visibilityOf(p), {
        caller: callerOf(p),
        scope: 'members:read',
      }),
    );
  }

  /** members:write, or self-access for one's own contact details and notification flags. */
  @Put(':memberId')
  @RequireScope('members:write')
  @SelfAccess()
  @ApiOkResponse({ type: MemberResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('memberId') rawId: string,
    @Body() body: UpdateMemberDto,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<MemberResponse> {
    const workspaceId = wid.toLowerCase();
    const memberId = memberIdOf(rawId);
    const expectedRevision = await this.pinnedRevision(workspaceId, memberId, ifMatch, p, 'members:write');
    const outcome = await this.commands.execute<UpdateMemberCommand, UpdateOutcome>(
      new UpdateMemberCommand(workspaceId, memberId, body, callerOf(p), expectedRevision),
    );
    // The answer is the member as the command decided it (the snapshot its MemberUpdated
    // carries, role as merges moved it), sent once the projections passed the append, with
    // the version the members projection gave the row at that very revision (and role: a
    // merge landing between the decision and the event moves the row's). A no-op (nothing
    // appended: no revision), a row this process did not project, or one moved since, is
    // read from the read model as before.
    if (outcome.revision !== undefined && (await this.waiter.settle())) {
      const version = this.versions.versionAt(memberId, outcome.revision, outcome.member.memberRoleId);
      if (version !== undefined) return withVersion(MemberResponse.of(outcome.member), version);
    }
    return this.queries.execute(
      new GetMemberQuery(workspaceId, memberId, { ...visibilityOf(p), anonymous: true }),
    );
  }

  /** Archives: the member keeps its history and id but leaves the workspace; its tokens stop working. */
  @Delete(':memberId')
  @RequireScope('members:admin')
  @ApiOkResponse({ type: MemberResponse, description: 'the archived member' })
  @ConditionalWrite()
  async archive(
    @Param('wid') wid: string,
    @Param('memberId') rawId: string,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<MemberResponse> {
    const workspaceId = wid.toLowerCase();
    const memberId = memberIdOf(rawId);
    const expectedRevision = await this.pinnedRevision(workspaceId, memberId, ifMatch, p, 'members:admin');
    await this.commands.execute(
      new ArchiveMemberCommand(workspaceId, memberId, callerOf(p), expectedRevision),
    );
    return this.queries.execute(new GetMemberQuery(workspaceId, memberId, visibilityOf(p)));
  }

  /** Revokes every member token of the member issued so far (members:write, or the member itself). */
  @Delete(':memberId/tokens')
  @RequireScope('members:write')
  @SelfAccess()
  @HttpCode(204)
  @ApiNoContentResponse()
  async revokeTokens(
    @Param('wid') wid: string,
    @Param('memberId') rawId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<void> {
    await this.commands.execute(
      new RevokeMemberTokensCommand(wid.toLowerCase(), memberIdOf(rawId), callerOf(p)),
    );
  }
}
