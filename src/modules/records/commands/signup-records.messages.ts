/**
 * What identity's signup sends to records for its `data` part (SPEC "Signup request":
 * data type slug → {externalId, values}). Message classes only: this file loads nothing,
 * so identity can import it through records' index without a cycle.
 */
export interface SignupDataCaller {
  scopes: readonly string[];
  memberId: number | undefined;
}

/** Checks a signup's `data` before anything is written: 400 for an unknown slug or a bad value. */
export class CheckSignupDataQuery {
  constructor(
    readonly workspaceId: string,
    readonly data: Readonly<Record<string, unknown>>,
    readonly caller: SignupDataCaller,
  ) {}
}

/** Upserts the `data` records for the signed-up member; answers record ids by slug. */
export class UpsertSignupRecordsCommand {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly data: Readonly<Record<string, unknown>>,
    readonly caller: SignupDataCaller,
  ) {}
}
