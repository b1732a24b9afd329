import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { accountDecider } from './account';
import type { AccountEvent } from './member.events';

const spec = deciderSpec(accountDecider);
const acc = '0190a6c4-0000-7000-8000-0000000000aa';
const t0 = '2026-11-21T10:00:00.000Z';
const registered: AccountEvent = {
  type: 'AccountRegistered',
  data: { accountUuid: acc, email: 'a@b.co', phone: null, name: 'Ann', createdAt: t0 },
};

describe('account decider', () => {
  it('registers once', () => {
    spec
      .given([])
      .when({ type: 'RegisterAccount', accountUuid: acc, email: 'a@b.co', phone: null, name: 'Ann', now: t0 })
      .then([registered]);
    spec
      .given([registered])
      .when({ type: 'RegisterAccount', accountUuid: acc, email: 'a@b.co', phone: null, name: 'Ann', now: t0 })
      .thenThrows(ConflictError);
  });

  it('an email is verified as registered, unproven once the account changes it, proven again back at the registered one', () => {
    const fold = (events: AccountEvent[]) =>
      events.reduce(accountDecider.evolve, accountDecider.initialState());
    const changed = (changes: { email?: string; name?: string }): AccountEvent => ({
      type: 'AccountUpdated',
      data: { accountUuid: acc, changes, updatedAt: t0 },
    });
    expect(fold([registered]).emailVerified).toBe(true);
    expect(fold([registered, changed({ name: 'Anna' })]).emailVerified).toBe(true);
    expect(fold([registered, changed({ email: 'x@y.co' })]).emailVerified).toBe(false);
    expect(fold([registered, changed({ email: 'x@y.co' }), changed({ email: 'a@b.co' })]).emailVerified).toBe(
      true,
    );
  });

  it('records only changed profile fields', () => {
    spec
      .given([registered])
      .when({
        type: 'UpdateAccount',
        accountUuid: acc,
        changes: { name: 'Ann', phone: '+14155550123' },
        now: t0,
      })
      .then([
        {
          type: 'AccountUpdated',
          data: { accountUuid: acc, changes: { phone: '+14155550123' }, updatedAt: t0 },
        },
      ]);
    spec
      .given([registered])
      .when({ type: 'UpdateAccount', accountUuid: acc, changes: { name: 'Ann' }, now: t0 })
      .then([]);
    spec
      .given([])
      .when({ type: 'UpdateAccount', accountUuid: acc, changes: { name: 'X' }, now: t0 })
      .thenThrows(NotFoundError);
  });
});
