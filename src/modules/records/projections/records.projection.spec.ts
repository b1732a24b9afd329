import { indexColumns, IndexedKind } from './records.projection';

describe('indexColumns (the index columns of a new record, as the SQL of an update computes them)', () => {
  const indexed = new Map<string, IndexedKind>([
    ['name', 'text'],
    ['email', 'text'],
    ['age', 'plain'],
    ['at', 'datetime'],
  ]);

  it('keeps indexed fields only, lower-cases text-like ones and joins them in slug order', () => {
    expect(
      indexColumns({ name: 'Ada LOVELACE', email: 'Ada@X.org', age: 36, note: 'Not Indexed' }, indexed),
    ).toEqual({
      indexed_values: { name: 'ada lovelace', email: 'ada@x.org', age: 36 },
      search_text: 'ada@x.org\nada lovelace',
    });
  });

  it('keeps a null text value in the index but out of the search text; nothing indexed is {} and null', () => {
    expect(indexColumns({ name: null, age: 1 }, indexed)).toEqual({
      indexed_values: { name: null, age: 1 },
      search_text: null,
    });
    expect(indexColumns({ note: 'x' }, indexed)).toEqual({ indexed_values: {}, search_text: null });
  });

  it("folds the letter case as PostgreSQL's lower() does (İ → i, every Σ and ς → σ)", () => {
    expect(indexColumns({ name: 'İSTANBUL ΟΔΥΣΣΕΑΣ οδυσσεας' }, indexed)).toEqual({
      indexed_values: { name: 'istanbul οδυσσεασ οδυσσεασ' },
      search_text: 'istanbul οδυσσεασ οδυσσεασ',
    });
  });
});
