import { storableText } from './storable-text';

describe('storableText', () => {
  it('replaces NUL and each half of a surrogate pair, keeping whole pairs', () => {
    expect(storableText('a\u0000b\ud800c\udc00d😀')).toBe('a\ufffdb\ufffdc\ufffdd😀');
    expect(storableText('a\u0000b\ud800', { replacement: '' })).toBe('ab');
  });

  it('cuts to max units without ending on half a pair', () => {
    expect(storableText('ab😀cd', { max: 3 })).toBe('ab');
    expect(storableText('ab😀cd', { max: 4 })).toBe('ab😀');
    expect(storableText('abc', { max: 10 })).toBe('abc');
  });
});
