import { randomUUID } from 'node:crypto';
import { EventSourcedRepository } from '../../src/core/cqrs/event-sourced-repository';
import { requestContext, SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import type { DomainEvent } from '../../src/core/cqrs/decider';
import { nextId } from '../../src/core/database/ids';
import { ConsistencyWaiter } from '../../src/core/projections/consistency';
import { DataSource } from 'typeorm';
import type { TestApp } from './app';

let counter = 0;

/** Appends events as the system would (outside any request) and waits for their projections. */
export async function appendAndSettle(
  t: TestApp,
  workspaceId: string,
  streams: [string, DomainEvent[]][],
): Promise<void> {
  const ctx = { requestId: `fixture-${process.pid}-${++counter}`, actor: SYSTEM_ACTOR, appended: [] };
  await requestContext.run(ctx, async () => {
    const repo = t.app.get(EventSourcedRepository);
    for (const [stream, events] of streams) await repo.append(stream, workspaceId, events, 'any');
  });
  if (!(await t.app.get(ConsistencyWaiter).waitFor(ctx.appended, 15_000)))
    throw new Error('appendAndSettle fixture: the projections did not catch up within 15 s');
}

export interface MemberFixture {
  memberId: number;
  accountUuid: string;
}

/**
 * A member created the way the members feature does (MemberCreated, and AccountRegistered
 * when it has an Account), for specs that need holders of a role. `account: false` makes a
 * person without an Account; `accountUuid` joins an existing account (e.g. another
 * bootstrap's, so its API key acts in this workspace too).
 */
export async function addMember(
  t: TestApp,
  options: {
    workspaceId: string;
    roleId: number;
    kind?: 'person' | 'agent';
    account?: boolean;
    accountUuid?: string;
    archived?: boolean;
  },
): Promise<MemberFixture> {
  const db = t.app.get(DataSource);
  const memberId = await nextId(db, 'member_id_seq');
  const now = new Date().toISOString();
  const accountUuid = options.accountUuid ?? randomUUID();
  const streams: [string, DomainEvent[]][] = [];
  if (!options.accountUuid && options.account !== false) {
    streams.push([
      `account-${accountUuid}`,
      [
        {
          type: 'AccountRegistered',
          data: { accountUuid, email: `m${memberId}@example.com`, phone: null, name: null, createdAt: now },
        },
      ],
    ]);
  }
  streams.push([
    `member-${memberId}`,
    [
      {
        type: 'MemberCreated',
        data: {
          memberId,
          workspaceId: options.workspaceId,
          // A person without an Account still needs a value while members.account_uuid is NOT NULL:
          // an account uuid that no AccountRegistered ever created reads as "no Account".
          accountUuid,
          email: null,
          phone: null,
          name: null,
          externalId: null,
          memberRoleId: options.roleId,
          kind: options.kind ?? 'person',
          notifySms: false,
          notifyEmail: false,
          notifyVoice: false,
          createdAt: now,
        },
      },
    ],
  ]);
  await appendAndSettle(t, options.workspaceId, streams);
  if (options.archived) {
    // Archiving belongs to the members feature; the read model is what role decisions read.
    await db.query(`UPDATE members SET status = 'archived' WHERE id = $1`, [memberId]);
  }
  return { memberId, accountUuid };
}

/** A custom role created as legacy data did (no API path makes a "manager" duplicate any more). */
export async function addLegacyRole(
  t: TestApp,
  workspaceId: string,
  name: string,
  permissions: string[] = [],
): Promise<number> {
  const roleId = await nextId(t.app.get(DataSource), 'member_role_id_seq');
  await appendAndSettle(t, workspaceId, [
    [
      `memberrole-${roleId}`,
      [
        {
          type: 'MemberRoleCreated',
          data: {
            roleId,
            workspaceId,
            name,
            permissions,
            builtIn: null,
            createdAt: new Date().toISOString(),
          },
        },
      ],
    ],
  ]);
  return roleId;
}

export async function memberRoleOf(t: TestApp, memberId: number): Promise<number> {
  const rows = (await t.app
    .get(DataSource)
    .query(`SELECT member_role_id FROM members WHERE id = $1`, [memberId])) as { member_role_id: number }[];
  return rows[0].member_role_id;
}
