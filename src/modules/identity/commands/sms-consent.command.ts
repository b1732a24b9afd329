import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { MemberWriter } from './member-writer.service';

/**
 * The member texted an SMS keyword (messaging's inbound SMS): STOP and its synonyms
 * opt out, START/YES/UNSTOP opt back in. notifySms is identity's, so messaging goes
 * through this command rather than writing the member itself. Appends MemberUpdated
 * (when notifySms changes) and MemberOptedOutOfSms or MemberOptedInToSms.
 */
export class RecordSmsConsentCommand {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly consent: 'opted_out' | 'opted_in',
    /** The keyword as texted, upper-cased (STOP, UNSUBSCRIBE, START...). */
    readonly keyword: string,
  ) {}
}

@CommandHandler(RecordSmsConsentCommand)
export class RecordSmsConsentHandler implements ICommandHandler<RecordSmsConsentCommand, void> {
  constructor(private readonly members: MemberWriter) {}

  async execute(cmd: RecordSmsConsentCommand): Promise<void> {
    await this.members.recordSmsConsent(cmd.workspaceId, cmd.memberId, cmd.consent, cmd.keyword);
  }
}
