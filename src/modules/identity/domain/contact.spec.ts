import { ValidationError } from '../../../core/http/domain-errors';
import { normalizeEmail, normalizeExternalId, normalizeName, normalizePhone } from './contact';

describe('contact normalisation', () => {
  it('lower-cases and trims emails, and refuses what is not one, naming the field', () => {
    expect(normalizeEmail('  Ann.Smith@Example.COM ', 'member.email')).toBe('ann.smith@example.com');
    expect(() => normalizeEmail('ann', 'member.email')).toThrow(
      new ValidationError('member.email: must be an email address'),
    );
  });

  it('normalises phones to E.164 and refuses unparseable ones', () => {
    expect(normalizePhone('+1 (415) 555-0123', 'phone')).toBe('+14155550123');
    expect(normalizePhone('+44 20 7946 0958', 'phone')).toBe('+442079460958');
    expect(normalizePhone('+15555550123', 'phone')).toBe('+15555550123');
    for (const bad of ['415 555 0123', 'call me', '+1555', ''])
      expect(() => normalizePhone(bad, 'phone')).toThrow(/^phone: must be a phone number/);
  });

  it('takes the whole text as the number: words around it or an extension are refused, not another number kept', () => {
    for (const bad of [
      'call me +14155550100 now',
      '+14155550100 ext. 12',
      '+14155550100abc',
      'tel:+14155550100',
    ]) {
      let error: unknown;
      try {
        normalizePhone(bad, 'member.phone');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(
        /^member\.phone: must be a phone number in international form/,
      );
      expect((error as Error).message).not.toContain('4155550100');
    }
  });

  it('trims names and external ids, an empty one meaning none', () => {
    expect(normalizeName('  Ann ', 'name')).toBe('Ann');
    expect(normalizeName('   ', 'name')).toBeNull();
    expect(normalizeExternalId(' crm-1 ', 'externalId')).toBe('crm-1');
    expect(() => normalizeName('x'.repeat(201), 'name')).toThrow(/^name:/);
  });
});
