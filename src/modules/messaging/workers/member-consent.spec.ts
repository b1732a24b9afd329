import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { recipientOf } from './member-consent';

const W = 'w-1';
const base = {
  memberId: 1,
  workspaceId: W,
  accountUuid: null,
  email: 'a@example.com',
  phone: '+14155550100',
  name: null,
  externalId: null,
  memberRoleId: 1,
  kind: 'person',
  notifySms: false,
  notifyEmail: false,
  notifyVoice: false,
  createdAt: '2026-01-01T00:00:00Z',
};
const created = (flags: Partial<typeof base> = {}) =>
  ({ type: 'MemberCreated', data: { ...base, ...flags } }) as unknown as StoredEvent;
const updated = (flags: Partial<typeof base>, status = 'active') =>
  ({
    type: 'MemberUpdated',
    data: { memberId: 1, workspaceId: W, changes: flags, member: { ...base, ...flags, status } },
  }) as unknown as StoredEvent;
const keyword = (type: 'MemberOptedOutOfSms' | 'MemberOptedInToSms') =>
  ({ type, data: { memberId: 1, workspaceId: W, keyword: 'STOP' } }) as unknown as StoredEvent;

describe('recipientOf: consent per channel on the member stream', () => {
  it('reads each channel its own flag: notifySms, notifyEmail, notifyVoice', () => {
    const only = (flag: 'notifySms' | 'notifyEmail' | 'notifyVoice') => [created({ [flag]: true })];
    expect(recipientOf(W, only('notifyEmail'), 'email').consent).toBe('consented');
    expect(recipientOf(W, only('notifyEmail'), 'phone-sms').consent).toBe('no_consent');
    expect(recipientOf(W, only('notifyEmail'), 'phone-voice').consent).toBe('no_consent');
    expect(recipientOf(W, only('notifyVoice'), 'phone-voice').consent).toBe('consented');
    expect(recipientOf(W, only('notifySms'), 'email').consent).toBe('no_consent');
  });

  it('takes the last snapshot: a flag turned off is no consent, an archived member no address', () => {
    const events = [created({ notifyEmail: true }), updated({ notifyEmail: false })];
    expect(recipientOf(W, events, 'email')).toMatchObject({ consent: 'no_consent', email: 'a@example.com' });
    const archived = [created({ notifyEmail: true }), updated({ notifyEmail: true }, 'archived')];
    expect(recipientOf(W, archived, 'email')).toMatchObject({ consent: 'consented', active: false });
  });

  it('lets STOP hold for SMS only, until START', () => {
    const stopped = [created({ notifySms: true, notifyEmail: true }), keyword('MemberOptedOutOfSms')];
    expect(recipientOf(W, stopped, 'phone-sms').consent).toBe('opted_out');
    expect(recipientOf(W, stopped, 'email').consent).toBe('consented');
    expect(recipientOf(W, [...stopped, keyword('MemberOptedInToSms')], 'phone-sms').consent).toBe(
      'consented',
    );
  });

  it('gives a member of another workspace neither consent nor address', () => {
    const events = [created({ notifyEmail: true })];
    expect(recipientOf('w-2', events, 'email')).toEqual({
      consent: 'no_consent',
      phone: null,
      email: null,
      active: false,
    });
  });
});
