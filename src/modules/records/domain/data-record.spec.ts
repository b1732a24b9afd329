import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { DataRecordCommand, dataRecordDecider, DataTypeFacts } from './data-record';
import type { DataRecordCreated, DataRecordEvent } from './data-record.events';
import { recordClaims } from './record-claims';

const spec = deciderSpec(dataRecordDecider);
const workspaceId = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T11:00:00.000Z';

const type: DataTypeFacts = {
  dataTypeId: 4,
  workspaceId,
  name: 'Patients',
  slug: 'patients',
  isCollection: true,
  visibility: 'workspace',
  ownerMemberId: 7,
  fields: [
    { name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
    { name: 'Phone', slug: 'phone', fieldType: 'phone', required: false, shouldIndex: false },
    { name: 'Age', slug: 'age', fieldType: 'number', required: false, shouldIndex: false },
  ],
};
const member = { id: 12, email: 'ann@example.com', phone: null, name: 'Ann', externalId: null };
const dataType = { id: 4, slug: 'patients', name: 'Patients' };

const created: DataRecordCreated = {
  type: 'DataRecordCreated',
  data: {
    recordId: 9,
    workspaceId,
    dataTypeId: 4,
    memberId: 12,
    externalId: 'p-1',
    fieldValues: { name: 'Ann', phone: '+14155550123', age: 41 },
    dataType,
    member,
    createdAt: now,
  },
};

const create = (
  over: Partial<Extract<DataRecordCommand, { type: 'CreateRecord' }>> = {},
): DataRecordCommand => ({
  type: 'CreateRecord',
  recordId: 9,
  dataType: type,
  memberId: 12,
  member,
  externalId: 'p-1',
  fieldValues: { name: 'Ann', phone: '+1 (415) 555-0123', age: 41 },
  now,
  ...over,
});

const update = (fieldValues: unknown, t: DataTypeFacts = type): DataRecordCommand => ({
  type: 'UpdateRecord',
  dataType: t,
  fieldValues,
  member,
  now: later,
});

describe('data record decider', () => {
  it('creates a record with its values normalised, its type and its member', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('refuses bad values, an unknown member and a second creation', () => {
    spec
      .given([])
      .when(create({ fieldValues: { phone: '+14155550123' } }))
      .thenThrows(ValidationError, /^fieldValues\.name: is required/);
    spec
      .given([])
      .when(create({ member: undefined }))
      .thenThrows(ValidationError, /^memberId: no member/);
    spec.given([created]).when(create()).thenThrows(ConflictError);
  });

  it('records the changed fields with their previous values, null clearing one', () => {
    spec
      .given([created])
      .when(update({ age: 42, phone: null, name: 'Ann' }))
      .then([
        {
          type: 'DataRecordUpdated',
          data: {
            recordId: 9,
            workspaceId,
            dataTypeId: 4,
            memberId: 12,
            externalId: 'p-1',
            changes: { age: 42, phone: null },
            previous: { age: 41, phone: '+14155550123' },
            fieldValues: { name: 'Ann', age: 42 },
            dataType,
            member,
            updatedAt: later,
          },
        },
      ]);
    spec
      .given([created])
      .when(update({ age: 41 }))
      .then([]);
    spec
      .given([created])
      .when(update({ name: null }))
      .thenThrows(ValidationError, /^fieldValues\.name: is required and cannot be cleared/);
  });

  it('drops values of fields the schema no longer has with the next change', () => {
    const narrowed = { ...type, fields: type.fields.filter((f) => f.slug !== 'phone') };
    const [event] = dataRecordDecider.decide(
      update({ age: 50 }, narrowed),
      dataRecordDecider.evolve(dataRecordDecider.initialState(), created),
    );
    expect(event.type === 'DataRecordUpdated' && event.data.fieldValues).toEqual({ name: 'Ann', age: 50 });
  });

  it('drops values set before a forced removal or retyping of their field, though the field is back', () => {
    const state = dataRecordDecider.evolve(dataRecordDecider.initialState(), created);
    // phone removed and age retyped at `now + 1 min`, both fields back in the schema since.
    const dropped = {
      ...type,
      droppedAt: { phone: '2026-11-23T10:01:00.000Z', age: '2026-11-23T10:01:00.000Z' },
    };
    const [event] = dataRecordDecider.decide(update({ name: 'Bea' }, dropped), state);
    expect(event.type === 'DataRecordUpdated' && event.data).toMatchObject({
      changes: { name: 'Bea' },
      previous: { name: 'Ann' },
      fieldValues: { name: 'Bea' },
    });
    // A value given after the drop is kept.
    const [again] = dataRecordDecider.decide(update({ age: 3 }, dropped), state);
    const next = dataRecordDecider.evolve(state, again);
    const [last] = dataRecordDecider.decide(
      { ...update({ name: 'Cy' }, dropped), now: '2026-11-23T12:00:00.000Z' },
      next,
    );
    expect(last.type === 'DataRecordUpdated' && last.data.fieldValues).toEqual({ name: 'Cy', age: 3 });
  });

  it("reads another type's or workspace's record, and a deleted one, as absent", () => {
    spec
      .given([created])
      .when(update({ age: 1 }, { ...type, dataTypeId: 5 }))
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when(update({ age: 1 }, { ...type, workspaceId: '0190a6c4-0000-7000-8000-000000000002' }))
      .thenThrows(NotFoundError);
    const deleted = {
      type: 'DataRecordDeleted' as const,
      data: { recordId: 9, workspaceId, dataTypeId: 4, memberId: 12, externalId: 'p-1', deletedAt: later },
    };
    spec.given([created]).when({ type: 'DeleteRecord', dataType: type, now: later }).then([deleted]);
    spec
      .given([created, deleted])
      .when(update({ age: 1 }))
      .thenThrows(NotFoundError);
  });

  it('undoes an update a schema change crossed: back where the previous value fits, cleared where not, later changes kept', () => {
    // Decided against `type`; meanwhile `age` was retyped to text and `phone` removed.
    const after: DataTypeFacts = {
      ...type,
      fields: [
        type.fields[0],
        { name: 'Age', slug: 'age', fieldType: 'text', required: false, shouldIndex: false },
      ],
      droppedAt: { age: now, phone: now },
    };
    const stateOf = (events: DataRecordEvent[]) =>
      events.reduce(dataRecordDecider.evolve, dataRecordDecider.initialState());
    const made = dataRecordDecider.decide(
      update({ name: 'Bea', age: 42, phone: '+14155550124' }),
      stateOf([created]),
    )[0];
    if (made.type !== 'DataRecordUpdated') throw new Error('expected an update');
    const revert = (over: Partial<Extract<DataRecordCommand, { type: 'RevertUpdate' }>> = {}) =>
      ({
        type: 'RevertUpdate',
        decidedAgainst: type,
        dataType: after,
        written: made.data.changes,
        previous: made.data.previous,
        member,
        now: later,
        ...over,
      }) as DataRecordCommand;
    const undo = dataRecordDecider.decide(revert(), stateOf([created, made]));
    expect(undo).toMatchObject([
      {
        type: 'DataRecordUpdated',
        data: {
          changes: { name: 'Ann', age: null, phone: null },
          previous: { name: 'Bea', age: 42, phone: '+14155550124' },
          fieldValues: { name: 'Ann' },
        },
      },
    ]);
    // A field changed again since keeps that change.
    const again = dataRecordDecider.decide(update({ name: 'Cy' }, type), stateOf([created, made]))[0];
    const undo2 = dataRecordDecider.decide(revert(), stateOf([created, made, again]));
    expect(undo2).toMatchObject([
      { data: { changes: { age: null, phone: null }, fieldValues: { name: 'Cy' } } },
    ]);
  });

  it('claims its externalId, and its member in a type that is no collection; frees them when deleted', () => {
    const empty = dataRecordDecider.initialState();
    const names = (refs: readonly { kind: { name: string }; value: string }[] = []) =>
      refs.map((r) => `${r.kind.name}=${r.value}`);
    expect(names(recordClaims([created], empty, true).take)).toEqual(['data_record_external_id=p-1']);
    expect(names(recordClaims([created], empty, false).take)).toEqual([
      'data_record_external_id=p-1',
      'data_record_member=12',
    ]);
    const state = dataRecordDecider.evolve(empty, created);
    const [deleted] = dataRecordDecider.decide({ type: 'DeleteRecord', dataType: type, now: later }, state);
    expect(names(recordClaims([deleted], state, false).release)).toEqual([
      'data_record_external_id=p-1',
      'data_record_member=12',
    ]);
  });
});
