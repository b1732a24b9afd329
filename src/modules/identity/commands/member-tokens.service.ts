import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
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

  /** Returns the token; it is shown this once, only its hash is kept. */
  async issue(workspaceId: string, memberId: number, accountUuid: string): Promise<string> {
    const { prefix, token, hash } = newMemberTokenSecret();
    const tokenId = uuidv7();
    await this.repo.handle({
      streamName: memberTokenStream(tokenId),
      workspaceId,
      decider: memberTokenDecider,
      command: {
        type: 'IssueMemberToken',
        tokenId,
        workspaceId,
        memberId,
        accountUuid,
        prefix,
        secretHash: hash,
        ttlDays: this.config.memberTokenTtlDays,
        now: new Date().toISOString(),
      },
    });
    return token;
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
