import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { DataTypeCommand, dataTypeDecider } from './data-type';
import type { DataTypeCreated, DataTypeEvent } from './data-type.events';
import { dataTypeClaims } from './record-claims';

const spec = deciderSpec(dataTypeDecider);
const workspaceId = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';

const created: DataTypeCreated = {
  type: 'DataTypeCreated',
  data: {
    dataTypeId: 4,
    workspaceId,
    name: 'Patients',
    slug: 'patients',
    isCollection: true,
    visibility: 'workspace',
    fields: [
      { name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
      { name: 'Age', slug: 'age', fieldType: 'number', required: false, shouldIndex: false },
    ],
    ownerMemberId: 7,
    createdAt: now,
  },
};

const create = (
  over: Partial<Extract<DataTypeCommand, { type: 'CreateDataType' }>> = {},
): DataTypeCommand => ({
  type: 'CreateDataType',
  dataTypeId: 4,
  workspaceId,
  name: ' Patients ',
  slug: 'patients',
  fields: [
    { name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
    { name: 'Age', slug: 'age', fieldType: 'number' },
  ],
  ownerMemberId: 7,
  now,
  ...over,
});

const update = (
  over: Partial<Extract<DataTypeCommand, { type: 'UpdateDataType' }>> = {},
): DataTypeCommand => ({
  type: 'UpdateDataType',
  dataTypeId: 4,
  workspaceId,
  force: false,
  fieldsHoldingValues: [],
  recordCount: 0,
  now,
  ...over,
});

describe('data type decider', () => {
  it('creates a workspace-wide collection by default, fields normalised', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('checks slugs, field slugs, field types and select options', () => {
    spec
      .given([])
      .when(create({ slug: 'Patients' }))
      .thenThrows(ValidationError, /^slug:/);
    spec
      .given([])
      .when(create({ slug: '_x' }))
      .thenThrows(ValidationError, /^slug:/);
    spec
      .given([])
      .when(create({ fields: [{ name: 'A', slug: 'a b', fieldType: 'text' }] }))
      .thenThrows(ValidationError, /^fields\.0\.slug:/);
    spec
      .given([])
      .when(
        create({
          fields: [
            { name: 'A', slug: 'a', fieldType: 'text' },
            { name: 'B', slug: 'a', fieldType: 'email' },
          ],
        }),
      )
      .thenThrows(ValidationError, /^fields\.1\.slug: "a" is used by another field/);
    spec
      .given([])
      .when(create({ fields: [{ name: 'A', slug: 'a', fieldType: 'json' }] }))
      .thenThrows(
        ValidationError,
        /^fields\.0\.fieldType: must be one of text, date, email, number, boolean, datetime, phone, url, select/,
      );
    spec
      .given([])
      .when(create({ fields: [{ name: 'A', slug: 'a', fieldType: 'select', options: [] }] }))
      .thenThrows(ValidationError, /^fields\.0\.options:/);
    spec
      .given([])
      .when(create({ visibility: 'private' }))
      .thenThrows(ValidationError, /^visibility:/);
    spec.given([created]).when(create()).thenThrows(ConflictError);
  });

  it('updates only what changed, and nothing when nothing did', () => {
    spec
      .given([created])
      .when(update({ name: 'Clients', visibility: 'admin_only' }))
      .then([
        {
          type: 'DataTypeUpdated',
          data: { dataTypeId: 4, workspaceId, name: 'Clients', visibility: 'admin_only', updatedAt: now },
        },
      ]);
    spec
      .given([created])
      .when(update({ name: 'Patients', slug: 'patients' }))
      .then([]);
  });

  it('refuses removing or retyping a field that holds values unless forced', () => {
    const fields = [{ name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true }];
    spec
      .given([created])
      .when(update({ fields, fieldsHoldingValues: ['age'] }))
      .thenThrows(ConflictError, /^fields: age hold values/);
    spec
      .given([created])
      .when(
        update({
          fields: [...fields, { name: 'Age', slug: 'age', fieldType: 'text' }],
          fieldsHoldingValues: ['age'],
        }),
      )
      .thenThrows(ConflictError, /^fields: age/);
    spec
      .given([created])
      .when(update({ fields, fieldsHoldingValues: ['age'], force: true }))
      .then([
        {
          type: 'DataTypeUpdated',
          data: {
            dataTypeId: 4,
            workspaceId,
            fields: [{ name: 'Name', slug: 'name', fieldType: 'text', required: true, shouldIndex: true }],
            removedFields: ['age'],
            updatedAt: now,
          },
        },
      ]);
    // A field without values goes freely.
    spec
      .given([created])
      .when(update({ fields }))
      .then([
        {
          type: 'DataTypeUpdated',
          data: {
            dataTypeId: 4,
            workspaceId,
            fields: [{ ...fields[0], fieldType: 'text' }] as never,
            removedFields: ['age'],
            updatedAt: now,
          },
        },
      ]);
  });

  it('changes isCollection only without records', () => {
    spec
      .given([created])
      .when(update({ isCollection: false, recordCount: 2 }))
      .thenThrows(ConflictError, /^isCollection:/);
    spec
      .given([created])
      .when(update({ isCollection: false }))
      .then([
        {
          type: 'DataTypeUpdated',
          data: { dataTypeId: 4, workspaceId, isCollection: false, updatedAt: now },
        },
      ]);
  });

  it('deletes only without records unless forced; another workspace reads as absent', () => {
    const del = (recordCount: number, force: boolean, ws = workspaceId): DataTypeCommand => ({
      type: 'DeleteDataType',
      dataTypeId: 4,
      workspaceId: ws,
      recordCount,
      force,
      now,
    });
    spec
      .given([created])
      .when(del(3, false))
      .thenThrows(ConflictError, /has 3 record/);
    spec
      .given([created])
      .when(del(3, true))
      .then([
        { type: 'DataTypeDeleted', data: { dataTypeId: 4, workspaceId, slug: 'patients', deletedAt: now } },
      ]);
    spec
      .given([created])
      .when(del(0, false, '0190a6c4-0000-7000-8000-000000000002'))
      .thenThrows(NotFoundError);
    spec
      .given([])
      .when(update({ name: 'X' }))
      .thenThrows(NotFoundError);
  });

  it('takes the slug claim on creation, moves it on a slug change and frees it on deletion', () => {
    const empty = dataTypeDecider.initialState();
    expect(dataTypeClaims([created], empty).take!.map((c) => [c.kind.name, c.scope, c.value])).toEqual([
      ['data_type_slug', workspaceId, 'patients'],
    ]);
    const state = dataTypeDecider.evolve(empty, created);
    const renamed: DataTypeEvent = {
      type: 'DataTypeUpdated',
      data: { dataTypeId: 4, workspaceId, slug: 'clients', updatedAt: now },
    };
    const plan = dataTypeClaims([renamed], state);
    expect(plan.take!.map((c) => c.value)).toEqual(['clients']);
    expect(plan.release!.map((c) => c.value)).toEqual(['patients']);
    const deleted: DataTypeEvent = {
      type: 'DataTypeDeleted',
      data: { dataTypeId: 4, workspaceId, slug: 'patients', deletedAt: now },
    };
    expect(dataTypeClaims([deleted], state).release!.map((c) => c.value)).toEqual(['patients']);
  });
});
