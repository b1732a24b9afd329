import { ValidationError } from '../http/domain-errors';
import { e164Of, phoneNumberOf } from './phone-number';

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

  it('refuses text longer than any number without parsing it', () => {
    expect(e164Of(`+1 415 555 0100${' '.repeat(60)}`)).toBeUndefined();
  });

  it('phoneNumberOf: the number, or a 400 naming the field that does not echo the text', () => {
    expect(phoneNumberOf('+1 (415) 555-0100', 'member.phone')).toBe('+14155550100');
    expect(() => phoneNumberOf('call me +14155550100 now', 'fieldValues.mobile')).toThrow(
      new ValidationError(
        'fieldValues.mobile: must be a phone number in international form and nothing else (no extension), e.g. +14155550123',
      ),
    );
  });
});
