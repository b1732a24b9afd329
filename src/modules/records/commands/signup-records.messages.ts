/**
 * What identity's signup sends to records for its `data` part (SPEC "Signup request":
 * data type slug → {externalId, values}). Message classes only: this file loads nothing,
 * so identity can import it through records' index without a cycle.
 */
export interface SignupDataCaller {
  scopes: readonly string[];
  memberId: number | undefined;
}

/** The signed-up member as identity knows it (its read model may not show a new member yet). */
export interface SignupMember {
  id: number;
  email: string | null;
  phone: string | null;
  name: string | null;
  externalId: string | null;
}

/**
 * Checks a signup's `data` before anything is written, as the write would: 400 for an
 * unknown slug or a bad value, 403 for a record the caller may not edit, 409 for an
 * externalId another member's record holds or a second record of a profile type.
 */
export class CheckSignupDataQuery {
  constructor(
    readonly workspaceId: string,
    readonly data: Readonly<Record<string, unknown>>,
    readonly caller: SignupDataCaller,
    /** The member the signup finds; null when it will create one (which holds no record yet). */
    readonly memberId: number | null = null,
  ) {}
}

/** Upserts the `data` records for the signed-up member; answers record ids by slug. */
export class UpsertSignupRecordsCommand {
  constructor(
    readonly workspaceId: string,
    readonly member: SignupMember,
    readonly data: Readonly<Record<string, unknown>>,
    readonly caller: SignupDataCaller,
  ) {}
}
