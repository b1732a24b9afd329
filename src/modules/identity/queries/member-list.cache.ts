/**
 * Rendered pages of the member list, kept by the process that rendered them and served
 * again while the workspace's list version (member_list_versions, moved by the members
 * projection in the transaction of every change a list can show) is still the one the
 * page was rendered at. The version the page is checked against is the one the members
 * projection announced in Redis before committing it (core/http/kept-reads.ts), read with
 * the request's admission: a page rendered or confirmed at exactly that version is served
 * from memory for KEPT_PAGE_MS at most; otherwise, or with no version announced, the
 * version is read from PostgreSQL in the statement that renders the page only when it
 * moved. Either way a page is never older than what a fresh read would show: a write
 * projected by any process announced its version before it committed, so before any
 * client was answered.
 *
 * A page is keyed by the statement that renders it and its parameters, the workspace,
 * the filters, the page and the caller's visibility (the `m.id = selfId` that lets a
 * caller without members:admin see itself) among them: a page is only ever served for
 * the very query that rendered it, so no caller sees more than its own query returns.
 */
export interface CachedPage<Body> {
  /** The workspace's list version the page was rendered at. */
  version: string;
  body: Body;
  /**
   * Until when (ms since the epoch) the page may be served without PostgreSQL while its
   * version is the announced one: 0 when it was rendered at another version.
   */
  until: number;
}

/**
 * How long a page confirmed at the announced version is served from memory: a change that
 * moves no announced version (a rebuild replaying the same events, a migration) shows
 * within this bound, as in core/http/kept-reads.ts.
 */
export const KEPT_PAGE_MS = 1000;

/** Pages kept per process; the least recently used is dropped first. */
export const MEMBER_LIST_CACHE_PAGES = 2_000;
/** Characters of all kept pages together (about 50 MB at most): beyond, the least recently used go. */
export const MEMBER_LIST_CACHE_CHARS = 24 * 1024 * 1024;
/** A page larger than this (a pageSize of 1000 with long fields) is rendered every time. */
export const MEMBER_LIST_CACHE_MAX_PAGE_CHARS = 256 * 1024;

/** Bodies are text or bytes; their size counts in characters or bytes alike. */
export class RenderedPageCache<Body extends { length: number }> {
  private readonly pages = new Map<string, CachedPage<Body>>();
  private chars = 0;

  constructor(
    private readonly maxPages = MEMBER_LIST_CACHE_PAGES,
    private readonly maxPageChars = MEMBER_LIST_CACHE_MAX_PAGE_CHARS,
    private readonly maxChars = MEMBER_LIST_CACHE_CHARS,
  ) {}

  /** The page kept under `key`, if any (whatever its version: the caller compares it). */
  get(key: string): CachedPage<Body> | undefined {
    const page = this.pages.get(key);
    if (page) {
      // Most recently used last, so the Map's first key is the one to drop.
      this.pages.delete(key);
      this.pages.set(key, page);
    }
    return page;
  }

  set(key: string, page: CachedPage<Body>): void {
    this.drop(key);
    if (page.body.length > this.maxPageChars) return;
    this.pages.set(key, page);
    this.chars += key.length + page.body.length;
    while (this.pages.size > this.maxPages || this.chars > this.maxChars)
      this.drop(this.pages.keys().next().value as string);
  }

  private drop(key: string): void {
    const page = this.pages.get(key);
    if (!page) return;
    this.pages.delete(key);
    this.chars -= key.length + page.body.length;
  }

  get size(): number {
    return this.pages.size;
  }

  /** Characters held: the kept pages' bodies and keys. */
  get heldChars(): number {
    return this.chars;
  }
}
