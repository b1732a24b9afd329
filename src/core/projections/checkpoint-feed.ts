import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { Position, StoredEvent } from '../event-store/event-store.port';
import { CHECKPOINT_CHANNEL } from './checkpoints';

/**
 * What a committed projection batch announces: its checkpoint's new position, and
 * whether the batch held an event that changes who may do what (so credential and
 * membership caches must drop what they hold). A notice without a position (a rebuild
 * swapping tables in) says "this checkpoint moved, read it again".
 */
export interface CheckpointNotice {
  name: string;
  position?: Position;
  auth?: boolean;
}

/** The NOTIFY payload (at most a few dozen bytes, far below PostgreSQL's 8000). */
export function encodeNotice(n: CheckpointNotice): string {
  if (!n.position) return n.name;
  return JSON.stringify({
    n: n.name,
    c: n.position.commit.toString(),
    p: n.position.prepare.toString(),
    ...(n.auth ? { a: 1 } : {}),
  });
}

/** A payload that is not ours in JSON is a bare checkpoint name (a rebuild's swap). */
export function decodeNotice(payload: string | undefined): CheckpointNotice | undefined {
  if (!payload) return undefined;
  if (!payload.startsWith('{')) return { name: payload };
  try {
    const o = JSON.parse(payload) as { n: string; c: string; p: string; a?: number };
    return { name: o.n, position: { commit: BigInt(o.c), prepare: BigInt(o.p) }, auth: o.a === 1 };
  } catch {
    return undefined;
  }
}

type AuthPredicate = (event: StoredEvent) => boolean;

/**
 * One application's feed of committed checkpoints: the projection host publishes each
 * batch it commits here (in-process, no round trip), and its LISTEN connection (opened on
 * first use by a waiter or the credential cache) publishes what other processes commit. Read-your-writes keeps its checkpoint map from it and the
 * credential cache drops its entries on notices flagged `auth`. Per application, never
 * a module global: two applications in one process (tests) use different databases.
 */
@Injectable()
export class CheckpointFeed implements OnModuleDestroy {
  private readonly listeners = new Set<(n: CheckpointNotice) => void>();
  private readonly lostListeners = new Set<() => void>();
  private readonly authPredicates: AuthPredicate[] = [];
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly db: DataSource) {}

  /** True while notices from other processes arrive (the LISTEN connection is up). */
  get live(): boolean {
    return this.client !== undefined;
  }

  /** Opens the LISTEN connection once; again after it was lost. */
  listen(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= (async () => {
      const url = (this.db.options as { url?: string }).url!;
      const client = new Client({ connectionString: url, application_name: 'workspace-service:checkpoints' });
      client.on('notification', (msg) => {
        const notice = decodeNotice(msg.payload);
        if (notice) this.publish(notice);
      });
      client.on('error', () => {
        if (this.client !== client) return;
        // Notices may have been missed: whoever relies on them must stop trusting what they kept.
        this.client = undefined;
        for (const l of [...this.lostListeners]) l();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${CHECKPOINT_CHANNEL}`);
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      if (this.closed) await client.end().catch(() => undefined);
      else this.client = client;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** Called when the LISTEN connection is lost (notices from other processes may be missing). */
  onLost(listener: () => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  subscribe(listener: (n: CheckpointNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(notice: CheckpointNotice): void {
    for (const l of [...this.listeners]) l(notice);
  }

  /**
   * Features that resolve credentials or memberships name the events that change
   * them (a key revoked, a member archived, a role's scopes changed); a batch holding
   * one is announced with `auth`, in this process and every other.
   */
  invalidateAuthOn(predicate: AuthPredicate): void {
    this.authPredicates.push(predicate);
  }

  affectsAuth(events: readonly StoredEvent[]): boolean {
    return events.some((e) => this.authPredicates.some((p) => p(e)));
  }
}
