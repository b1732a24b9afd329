import { GuardedEventDataCatalogue } from './guarded-event-data';

describe('GuardedEventDataCatalogue', () => {
  const catalogue = new GuardedEventDataCatalogue([
    { eventTypes: ['Written', 'Changed'], fields: ['values', 'previous'], scope: 'records:admin' },
    { eventTypes: ['Changed'], fields: ['note'], scope: 'chats:read' },
  ]);
  const data = { id: 1, values: { dx: 'secret' }, previous: { dx: 'old' }, note: 'n' };

  it('leaves out the guarded keys for a caller without the scope, and nothing else', () => {
    expect(catalogue.visibleData('Written', data, ['workspace:admin'])).toEqual({ id: 1, note: 'n' });
    expect(catalogue.visibleData('Changed', data, ['workspace:admin'])).toEqual({ id: 1 });
    expect(catalogue.visibleData('Changed', data, ['records:write', 'chats:admin'])).toEqual({
      id: 1,
      note: 'n',
    });
  });

  it('shows them to a holder of the scope (or a higher level), and leaves unguarded types alone', () => {
    expect(catalogue.visibleData('Changed', data, ['records:admin', 'chats:read'])).toBe(data);
    expect(catalogue.visibleData('Other', data, [])).toBe(data);
  });
});
