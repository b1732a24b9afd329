import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { nextIds } from '../../../core/database/ids';
import { DomainError, ValidationError } from '../../../core/http/domain-errors';
import { MAX_ID } from '../../../core/http/validation';
import { DataTypeFacts, normaliseExternalId } from '../domain/data-record';
import type { DataRecordEvent, RecordMember } from '../domain/data-record.events';
import { assertMayCreate, assertTypeRecordsAccess, RecordCaller } from '../domain/record-access.policy';
import { recordClaimConflict, RECORD_EXTERNAL_ID_CLAIM } from '../domain/record-claims';
import { RecordWriter } from './record-writer.service';

export const MAX_BULK_RECORDS = 10_000;
/** Records per atomic write: one statement of a few hundred kB. */
const BATCH = 500;
/** Below this a batch is not worth its failed statement: records go one by one. */
const MIN_BATCH = 8;
const CONCURRENCY = 8;
const RECORD_KEYS = new Set(['fieldValues', 'externalId', 'memberId']);

export class BulkRecordsCommand {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly records: readonly unknown[],
    readonly upsert: boolean,
    readonly caller: RecordCaller,
  ) {}
}

/** SPEC "Bulk record request and response". */
export interface BulkResultItem {
  index: number;
  status: 'created' | 'updated' | 'failed';
  recordId: number | null;
  externalId: string | null;
}

export interface BulkResult {
  success: boolean;
  totalCount: number;
  importedCount: number;
  results: BulkResultItem[];
  errors: { index: number; externalId: string | null; detail: string }[] | null;
}

interface Parsed {
  index: number;
  memberId: number | null;
  externalId: string | null;
  fieldValues: unknown;
}

/** A record's shape, checked here rather than by the DTO: a bad record fails alone, not the request. */
function parse(raw: unknown, index: number): Parsed {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ValidationError('record: must be an object');
  const r = raw as Record<string, unknown>;
  const unknown = Object.keys(r).find((k) => !RECORD_KEYS.has(k));
  if (unknown) throw new ValidationError(`${unknown}: unknown field`);
  const memberId = r.memberId ?? null;
  if (
    memberId !== null &&
    (!Number.isInteger(memberId) || (memberId as number) < 1 || (memberId as number) > MAX_ID)
  )
    throw new ValidationError(`memberId: must be an integer from 1 to ${MAX_ID}`);
  return {
    index,
    memberId: memberId as number | null,
    externalId: normaliseExternalId(r.externalId),
    fieldValues: r.fieldValues ?? {},
  };
}

/**
 * POST .../records/bulk: up to 10,000 records, each validated and written on its own and
 * reported per record. New records go in atomic batches (Claims.appendMany) decided batch
 * by batch, so no step holds more than a batch of events; a batch meeting a taken
 * externalId writes nothing and is halved, and the records that meet one go one by one
 * (an error without `upsert`, an update with it).
 */
@CommandHandler(BulkRecordsCommand)
export class BulkRecordsHandler implements ICommandHandler<BulkRecordsCommand, BulkResult> {
  constructor(
    private readonly records: RecordWriter,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: BulkRecordsCommand): Promise<BulkResult> {
    const total = cmd.records.length;
    if (total > MAX_BULK_RECORDS)
      throw new ValidationError(`records: at most ${MAX_BULK_RECORDS} records per request`);
    const type = await this.records.type(cmd.workspaceId, cmd.dataTypeId);
    assertTypeRecordsAccess(cmd.caller, type.visibility);
    // One slot per record, filled as each is decided: no sort, no second array of 10,000 at the end.
    const results = new Array<BulkResultItem>(total);
    const errors: NonNullable<BulkResult['errors']> = [];
    const fail = (index: number, externalId: string | null, err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
      results[index] = { index, status: 'failed', recordId: null, externalId };
      errors.push({ index, externalId, detail: err.message });
    };
    const done = (p: Parsed, status: 'created' | 'updated', recordId: number) =>
      (results[p.index] = { index: p.index, status, recordId, externalId: p.externalId });

    // Two records with one externalId would race each other; the later one fails, deterministically.
    const firstOf = new Map<string, number>();
    // Ids for every record at once (one statement); a failed record's id is a gap in the sequence.
    const ids = total ? await nextIds(this.db, 'data_record_id_seq', total) : [];

    // Each written batch's check that the type was not deleted meanwhile, awaited before the answer.
    const checks: Promise<void>[] = [];
    const defer = (check: Promise<void>) => {
      check.catch(() => undefined);
      checks.push(check);
    };

    type Decided = { p: Parsed; recordId: number; events: DataRecordEvent[] };
    type MemberOf = (p: Parsed) => RecordMember | null | undefined;
    const oneByOne = (batch: readonly Parsed[], memberOf: MemberOf) =>
      inPool(batch, CONCURRENCY, async (p) => {
        try {
          results[p.index] = await this.writeOne(cmd, type, p, memberOf(p));
        } catch (err) {
          fail(p.index, p.externalId, err);
        }
      });
    const decide = (batch: readonly Parsed[], memberOf: MemberOf): Decided[] => {
      const decided: Decided[] = [];
      for (const p of batch) {
        try {
          const recordId = ids[p.index];
          decided.push({ p, recordId, events: this.records.decideCreate(type, recordId, p, memberOf(p)) });
        } catch (err) {
          fail(p.index, p.externalId, err);
        }
      }
      return decided;
    };
    // One atomic write; a batch meeting a taken externalId writes nothing and is halved.
    const write = async (decided: readonly Decided[], memberOf: MemberOf): Promise<void> => {
      if (!decided.length) return;
      if (await this.records.createMany(type, decided, defer)) {
        for (const d of decided) done(d.p, 'created', d.recordId);
        return;
      }
      const rest = decided.map((d) => d.p);
      const half = Math.ceil(rest.length / 2);
      await batched(rest.slice(0, half), memberOf);
      await batched(rest.slice(half), memberOf);
    };
    const batched = async (batch: readonly Parsed[], memberOf: MemberOf): Promise<void> => {
      if (batch.length < MIN_BATCH || !this.records.canCreateMany) return oneByOne(batch, memberOf);
      await write(decide(batch, memberOf), memberOf);
    };

    // The request's records are taken BATCH at a time: parsed, checked and decided while
    // the previous batch is being written (its atomic write is a round trip to the
    // database; deciding is the process's work), then written once that write is done, so
    // no step holds more than two batches of decisions and events besides the request's
    // own array.
    let writing: Promise<void> = Promise.resolve();
    for (let start = 0; start < total; start += BATCH) {
      const end = Math.min(total, start + BATCH);
      const parsed: Parsed[] = [];
      for (let index = start; index < end; index++) {
        const raw = cmd.records[index];
        try {
          const p = parse(raw, index);
          if (p.externalId !== null) {
            const seen = firstOf.get(p.externalId);
            if (seen !== undefined)
              throw new ValidationError(`externalId: duplicates record ${seen} of this request`);
            firstOf.set(p.externalId, index);
          }
          assertMayCreate(cmd.caller, p.memberId, type.visibility);
          parsed.push(p);
        } catch (err) {
          fail(index, externalIdOf(raw), err);
        }
      }
      const members = await this.records.members(cmd.workspaceId, [
        ...new Set(parsed.flatMap((p) => (p.memberId === null ? [] : [p.memberId]))),
      ]);
      const memberOf: MemberOf = (p) => (p.memberId === null ? null : members.get(p.memberId));
      // With upsert, records whose externalId the read model already knows go straight to the update path.
      const known = cmd.upsert ? await this.knownExternalIds(type, parsed) : undefined;
      const isKnown = (p: Parsed) => known !== undefined && p.externalId !== null && known.has(p.externalId);
      const fresh = known?.size ? parsed.filter((p) => !isKnown(p)) : parsed;
      const existing = known?.size ? parsed.filter(isKnown) : [];
      const many = fresh.length >= MIN_BATCH && this.records.canCreateMany;
      const decided = many ? decide(fresh, memberOf) : [];
      await writing;
      writing = (async () => {
        if (many) await write(decided, memberOf);
        else await oneByOne(fresh, memberOf);
        await oneByOne(existing, memberOf);
      })();
      // Awaited on the next round or below; marked handled so a failure meanwhile is not an unhandled rejection.
      writing.catch(() => undefined);
    }
    await writing;
    await Promise.all(checks);

    errors.sort((a, b) => a.index - b.index);
    return {
      success: errors.length === 0,
      totalCount: total,
      importedCount: total - errors.length,
      results,
      errors: errors.length ? errors : null,
    };
  }

  /** One record: created, or (upsert) the record holding its externalId updated. */
  private async writeOne(
    cmd: BulkRecordsCommand,
    type: DataTypeFacts,
    p: Parsed,
    member: RecordMember | null | undefined,
  ): Promise<BulkResultItem> {
    const item = (status: 'created' | 'updated', recordId: number): BulkResultItem => ({
      index: p.index,
      status,
      recordId,
      externalId: p.externalId,
    });
    if (cmd.upsert && p.externalId !== null) {
      const held = await this.records.heldGrants(cmd.workspaceId, cmd.caller);
      const { record, wasCreated } = await this.records.upsert(
        type,
        p.externalId,
        { memberId: p.memberId, fieldValues: p.fieldValues },
        cmd.caller,
        held,
        () => undefined,
      );
      return item(wasCreated ? 'created' : 'updated', record.recordId);
    }
    const outcome = await this.records.create(type, p, member);
    if (outcome.kind === 'created') return item('created', outcome.record.recordId);
    if (outcome.error.kind === RECORD_EXTERNAL_ID_CLAIM.name)
      throw new ValidationError(
        `${recordClaimConflict(outcome.error).message}; send upsert: true to update it`,
      );
    throw recordClaimConflict(outcome.error);
  }

  private async knownExternalIds(type: DataTypeFacts, parsed: readonly Parsed[]): Promise<Set<string>> {
    const wanted = parsed.flatMap((p) => (p.externalId === null ? [] : [p.externalId]));
    if (!wanted.length) return new Set();
    const rows = (await this.db.query(
      `SELECT external_id FROM data_records WHERE data_type_id = $1 AND external_id = ANY($2::text[])`,
      [type.dataTypeId, wanted],
    )) as { external_id: string }[];
    return new Set(rows.map((r) => r.external_id));
  }
}

function externalIdOf(raw: unknown): string | null {
  const v = (raw as { externalId?: unknown } | null)?.externalId;
  return typeof v === 'string' ? v.trim().slice(0, 255) || null : null;
}

/** Runs `fn` over `items`, at most `concurrency` at a time. */
async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
