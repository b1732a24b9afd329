import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource, In } from 'typeorm';
import { DefaultRoleCheck } from '../commands/default-role-check';
import { MemberRoleEntity } from '../projections/member-role.entity';
import { RoleReferences } from './role-references';
import {
  GetBuiltInRoleIdQuery,
  GetRoleNamesQuery,
  GetRoleScopesQuery,
  ResolveDefaultMemberRoleQuery,
} from './role-facts.queries';

@QueryHandler(GetBuiltInRoleIdQuery)
export class GetBuiltInRoleIdHandler implements IQueryHandler<GetBuiltInRoleIdQuery, number | undefined> {
  constructor(private readonly refs: RoleReferences) {}

  execute(q: GetBuiltInRoleIdQuery): Promise<number | undefined> {
    return this.refs.builtInRoleId(q.workspaceId, q.key);
  }
}

@QueryHandler(GetRoleNamesQuery)
export class GetRoleNamesHandler implements IQueryHandler<GetRoleNamesQuery, Map<number, string>> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetRoleNamesQuery): Promise<Map<number, string>> {
    if (!q.roleIds.length) return new Map();
    const rows = await this.db
      .getRepository(MemberRoleEntity)
      .find({ select: { id: true, name: true }, where: { id: In([...new Set(q.roleIds)]) } });
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}

@QueryHandler(ResolveDefaultMemberRoleQuery)
export class ResolveDefaultMemberRoleHandler implements IQueryHandler<
  ResolveDefaultMemberRoleQuery,
  number | null
> {
  constructor(private readonly check: DefaultRoleCheck) {}

  execute(q: ResolveDefaultMemberRoleQuery): Promise<number | null> {
    return this.check.resolve(q.workspaceId, q.requested, q.field, q.granter);
  }
}

@QueryHandler(GetRoleScopesQuery)
export class GetRoleScopesHandler implements IQueryHandler<GetRoleScopesQuery, string[]> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetRoleScopesQuery): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT permissions FROM member_roles WHERE id = $1 AND workspace_id = $2`,
      [q.roleId, q.workspaceId],
    )) as { permissions: string[] }[];
    return rows[0]?.permissions ?? [];
  }
}
