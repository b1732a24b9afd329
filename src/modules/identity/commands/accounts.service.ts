import { Injectable } from '@nestjs/common';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { WrongExpectedRevisionError } from '../../../core/event-store/event-store.port';
import { ConflictError } from '../../../core/http/domain-errors';
import { accountDecider, AccountProfile, AccountState } from '../domain/account';
import { accountStream } from '../domain/identity.events';

export interface AccountView extends AccountProfile {
  uuid: string;
}

/** Account writes. Account events carry the workspace they happened in, or none (''). */
@Injectable()
export class AccountService {
  constructor(private readonly repo: EventSourcedRepository) {}

  async get(accountUuid: string): Promise<AccountState> {
    return (await this.repo.load(accountStream(accountUuid), accountDecider)).state;
  }

  /**
   * Registers the account unless it exists. Members are written before their account
   * (the member names the uuid), so a crash in between is repaired by the next signup
   * calling this again.
   */
  async ensure(accountUuid: string, profile: AccountProfile, workspaceId: string): Promise<AccountView> {
    const existing = await this.get(accountUuid);
    if (existing.exists) return view(accountUuid, existing);
    try {
      const { state } = await this.repo.handle({
        streamName: accountStream(accountUuid),
        workspaceId,
        decider: accountDecider,
        maxRetries: 0,
        command: { type: 'RegisterAccount', accountUuid, ...profile, now: new Date().toISOString() },
      });
      return view(accountUuid, state);
    } catch (err) {
      // A concurrent request registered it between our read and our append (or the reload).
      if (!(err instanceof WrongExpectedRevisionError) && !(err instanceof ConflictError)) throw err;
      return view(accountUuid, await this.get(accountUuid));
    }
  }

  /** A new account's stream, for a caller that creates it together with other new streams. */
  registration(
    accountUuid: string,
    profile: AccountProfile,
  ): { streamName: string; events: DomainEvent[]; account: AccountView } {
    const state = accountDecider.initialState();
    const events = accountDecider.decide(
      { type: 'RegisterAccount', accountUuid, ...profile, now: new Date().toISOString() },
      state,
    );
    return {
      streamName: accountStream(accountUuid),
      events,
      account: view(accountUuid, events.reduce(accountDecider.evolve, state)),
    };
  }

  async update(accountUuid: string, changes: Partial<AccountProfile>): Promise<AccountView> {
    const { state } = await this.repo.handle({
      streamName: accountStream(accountUuid),
      workspaceId: '',
      decider: accountDecider,
      command: { type: 'UpdateAccount', accountUuid, changes, now: new Date().toISOString() },
    });
    return view(accountUuid, state);
  }
}

function view(uuid: string, s: AccountProfile): AccountView {
  return { uuid, email: s.email, phone: s.phone, name: s.name };
}
