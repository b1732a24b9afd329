import { e164Of } from './phone-number';

describe('e164Of', () => {
  it('normalises a number in international form, formatting and all', () => {
    for (const raw of ['+14155550100', ' +1 (415) 555-0100 ', '+1.415.555.0100', '+١٤١٥٥٥٥٠١٠٠'])
      expect(e164Of(raw)).toBe('+14155550100');
    expect(e164Of('+44 020 7946 0958')).toBe('+442079460958');
  });

  it('refuses text around the number, an extension, and what is no possible number', () => {
    for (const raw of [
      'call me +14155550100 now',
      '+14155550100abc',
      '+14155550100 ext. 12',
      '+14155550100;ext=12',
      'tel:+14155550100',
      '14155550100',
      '+1415555010',
      '+1-800-FLOWERS',
      '',
    ])
      expect({ raw, e164: e164Of(raw) }).toEqual({ raw, e164: undefined });
  });
});
