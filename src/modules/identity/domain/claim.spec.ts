import { claimKey, claimKeysOf, foldClaim, memberCarries } from './claim';

const wid = '0190a6c4-0000-7000-8000-000000000001';

describe('uniqueness claims', () => {
  it('names the stream by workspace, field and a hash of the value, never the value', () => {
    const key = claimKey(wid, 'email', 'ann@example.com');
    expect(key.stream).toMatch(new RegExp(`^claim-member-email-${wid}-[0-9a-f]{64}$`));
    expect(key.stream).not.toContain('ann');
    expect(claimKey(wid, 'externalId', 'x').stream).toMatch(/^claim-member-externalid-/);
  });

  it('lists a member’s claims in lookup order and checks whether it still carries one', () => {
    const member = { workspaceId: wid, email: 'a@b.co', phone: '+14155550123', externalId: 'e1' };
    expect(claimKeysOf(member).map((k) => k.field)).toEqual(['externalId', 'email', 'phone']);
    expect(memberCarries(member, claimKey(wid, 'email', 'a@b.co'))).toBe(true);
    expect(memberCarries({ ...member, email: 'c@d.co' }, claimKey(wid, 'email', 'a@b.co'))).toBe(false);
    expect(memberCarries({ ...member, email: null }, claimKey(wid, 'email', 'a@b.co'))).toBe(false);
  });

  it('folds claims and releases, remembering who the last event was about', () => {
    const claimed = (memberId: number, at: string) => ({
      type: 'MemberValueClaimed' as const,
      data: { workspaceId: wid, field: 'email' as const, memberId, claimedAt: at },
    });
    const released = (memberId: number, at: string) => ({
      type: 'MemberValueReleased' as const,
      data: { workspaceId: wid, field: 'email' as const, memberId, releasedAt: at },
    });
    expect(foldClaim([])).toEqual({ holder: null, last: null, at: null });
    expect(foldClaim([claimed(1, 't1')])).toEqual({ holder: 1, last: 1, at: 't1' });
    expect(foldClaim([claimed(1, 't1'), released(1, 't2')])).toEqual({ holder: null, last: 1, at: 't2' });
    // A release by a former holder does not undo a newer claim.
    expect(foldClaim([claimed(1, 't1'), claimed(2, 't2'), released(1, 't3')])).toEqual({
      holder: 2,
      last: 2,
      at: 't2',
    });
  });
});
