import { NotFoundError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { PhoneNumberCreated, phoneNumberClaims, phoneNumberDecider, SERVICE_SCOPE } from './phone-number';

const now = '2026-11-23T10:00:00.000Z';
const ws = '0b8f7c1e-3f4a-4c55-9e2a-7d1c2b3a4f5e';
const spec = deciderSpec(phoneNumberDecider);
const created: PhoneNumberCreated = {
  type: 'PhoneNumberCreated',
  data: {
    phoneNumberId: 1,
    workspaceId: ws,
    number: '+14155550100',
    name: null,
    signupRoleId: null,
    createdAt: now,
  },
};

describe('phone number decider', () => {
  it('updates only what changes, and not in another workspace', () => {
    spec
      .given([created])
      .when({
        type: 'UpdatePhoneNumber',
        phoneNumberId: 1,
        workspaceId: ws,
        changes: { number: '+14155550100', name: 'Desk' },
        now,
      })
      .then([
        {
          type: 'PhoneNumberUpdated',
          data: { phoneNumberId: 1, workspaceId: ws, changes: { name: 'Desk' }, updatedAt: now },
        },
      ]);
    spec
      .given([created])
      .when({
        type: 'DeletePhoneNumber',
        phoneNumberId: 1,
        workspaceId: '11111111-2222-4333-8444-555555555555',
        now,
      })
      .thenThrows(NotFoundError);
  });

  it('claims the number service-wide, moves the claim on a change and frees it on delete', () => {
    const initial = phoneNumberDecider.initialState();
    expect(phoneNumberClaims([created], initial).take?.map((c) => [c.scope, c.value])).toEqual([
      [SERVICE_SCOPE, '+14155550100'],
    ]);
    const live = phoneNumberDecider.evolve(initial, created);
    const moved = phoneNumberClaims(
      [
        {
          type: 'PhoneNumberUpdated',
          data: { phoneNumberId: 1, workspaceId: ws, changes: { number: '+14155550101' }, updatedAt: now },
        },
      ],
      live,
    );
    expect(moved.take?.map((c) => c.value)).toEqual(['+14155550101']);
    expect(moved.release?.map((c) => c.value)).toEqual(['+14155550100']);
    const deleted = phoneNumberClaims(
      [
        {
          type: 'PhoneNumberDeleted',
          data: { phoneNumberId: 1, workspaceId: ws, number: '+14155550100', deletedAt: now },
        },
      ],
      live,
    );
    expect(deleted).toEqual({ take: [], release: [expect.objectContaining({ value: '+14155550100' })] });
  });
});
