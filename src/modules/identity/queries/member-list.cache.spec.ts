import { RenderedPageCache } from './member-list.cache';

describe('RenderedPageCache', () => {
  it('keeps the most recently used pages up to its bound, dropping the least recently used first', () => {
    const cache = new RenderedPageCache<string>(2, 100);
    cache.set('a', { version: '1', body: 'A', until: 0 });
    cache.set('b', { version: '1', body: 'B', until: 0 });
    expect(cache.get('a')).toEqual({ version: '1', body: 'A', until: 0 });
    cache.set('c', { version: '2', body: 'C', until: 0 });
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.body).toBe('A');
    expect(cache.get('c')?.body).toBe('C');
  });

  it('replaces a page rendered again, and keeps no page longer than its bound', () => {
    const cache = new RenderedPageCache<string>(10, 4);
    cache.set('a', { version: '1', body: 'AAAA', until: 0 });
    cache.set('a', { version: '2', body: 'BBBB', until: 0 });
    expect(cache.get('a')).toEqual({ version: '2', body: 'BBBB', until: 0 });
    // Too long to keep: nor is the older page under its key served any more.
    cache.set('a', { version: '3', body: 'CCCCC', until: 0 });
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps the characters of all its pages within its bound, dropping the least recently used first', () => {
    const cache = new RenderedPageCache<string>(100, 50, 30);
    cache.set('a', { version: '1', body: 'x'.repeat(9), until: 0 });
    cache.set('b', { version: '1', body: 'y'.repeat(9), until: 0 });
    cache.set('c', { version: '1', body: 'z'.repeat(9), until: 0 });
    expect(cache.heldChars).toBe(30);
    cache.get('a');
    cache.set('d', { version: '1', body: 'w'.repeat(4), until: 0 });
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.body).toBe('x'.repeat(9));
    expect(cache.heldChars).toBe(25);
    cache.set('a', { version: '2', body: 'v'.repeat(19), until: 0 });
    expect(cache.get('c')).toBeUndefined();
    expect(cache.heldChars).toBe(25);
    expect(cache.size).toBe(2);
  });
});
