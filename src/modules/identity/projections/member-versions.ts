import { Injectable } from '@nestjs/common';

/** How many members' versions a process keeps (the oldest written dropped first). */
const KEPT = 10_000;

/**
 * The version (ETag) each member's read-model row got from the members projection in this
 * process, with the stream revision it was built from. A member `PUT` answers from the
 * state it decided (the snapshot its MemberUpdated carries) once the projections passed its
 * append; the version is the read model's alone (a counter that role merges move as well),
 * so the answer takes it from here when the row stands at exactly the revision the `PUT`
 * appended, and reads the row otherwise (projection in another process, or a later event).
 *
 * Every statement of the projection that moves a member's version or stream revision
 * either records the row's new version and revision here or forgets the member: an entry
 * is never older than the row it describes, as far as this process projected it.
 */
@Injectable()
export class MemberVersions {
  private readonly rows = new Map<number, { revision: string; version: number; roleId: number }>();

  /**
   * The row of `memberId` now stands at `version`, built up to stream `revision`, with role
   * `roleId` (a role merge moves it from outside the member's stream).
   */
  seen(memberId: number, revision: string, version: number, roleId: number): void {
    this.rows.delete(memberId);
    this.rows.set(memberId, { revision, version, roleId });
    if (this.rows.size > KEPT) this.rows.delete(this.rows.keys().next().value!);
  }

  /** The projection moved the row in a way not recorded here. */
  forget(memberId: number): void {
    this.rows.delete(memberId);
  }

  /**
   * The row's version when it was last seen at stream `revision` with role `roleId`, and
   * nothing moved it since: a merge projected between the command's decision and its
   * event moved the role the command saw, and the row then differs from the decided member.
   */
  versionAt(memberId: number, revision: bigint, roleId: number): number | undefined {
    const row = this.rows.get(memberId);
    return row && row.revision === revision.toString() && row.roleId === roleId ? row.version : undefined;
  }
}
