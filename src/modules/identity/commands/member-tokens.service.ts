import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { memberTokenDecider, newMemberTokenSecret } from '../domain/member-token';
import { memberTokenStream } from '../domain/member.events';

/** Issues and revokes member tokens (`wsm_`), one stream per token so issuing never contends. */
@Injectable()
export class MemberTokenService {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Returns the token; it is shown this once, only its hash is kept. Its stream is new (a
   * fresh uuidv7): decided on the empty state and appended expecting no stream, without
   * reading it first.
   */
  async issue(workspaceId: string, memberId: number, accountUuid: string): Promise<string> {
    const { token, streamName, events } = this.newToken(workspaceId, memberId, accountUuid);
    await this.repo.append(streamName, workspaceId, events, 'no_stream');
    return token;
  }

  /** A new token's stream, for a caller that creates it together with other new streams. */
  newToken(
    workspaceId: string,
    memberId: number,
    accountUuid: string,
  ): { token: string; streamName: string; events: DomainEvent[] } {
    const { token, command } = this.issueCommand(workspaceId, memberId, accountUuid);
    const events = memberTokenDecider.decide(command, memberTokenDecider.initialState());
    return { token, streamName: memberTokenStream(command.tokenId), events };
  }

  private issueCommand(workspaceId: string, memberId: number, accountUuid: string) {
    const { prefix, token, hash } = newMemberTokenSecret();
    const command = {
      type: 'IssueMemberToken' as const,
      tokenId: uuidv7(),
      workspaceId,
      memberId,
      accountUuid,
      prefix,
      secretHash: hash,
      ttlDays: this.config.memberTokenTtlDays,
      now: new Date().toISOString(),
    };
    return { token, command };
  }

  async revoke(workspaceId: string, tokenId: string): Promise<void> {
    await this.repo.handle({
      streamName: memberTokenStream(tokenId),
      workspaceId,
      decider: memberTokenDecider,
      command: { type: 'RevokeMemberToken', tokenId, now: new Date().toISOString() },
    });
  }
}
