/**
 * SMS keywords (DESIGN.md, "Decisions where the spec is silent"): a single word,
 * trimmed, in any case. Anything else is an ordinary message.
 */
export type SmsKeyword = 'opt_out' | 'opt_in' | 'help';

const KEYWORDS: Record<string, SmsKeyword> = {
  STOP: 'opt_out',
  STOPALL: 'opt_out',
  UNSUBSCRIBE: 'opt_out',
  CANCEL: 'opt_out',
  END: 'opt_out',
  QUIT: 'opt_out',
  REVOKE: 'opt_out',
  OPTOUT: 'opt_out',
  START: 'opt_in',
  YES: 'opt_in',
  UNSTOP: 'opt_in',
  HELP: 'help',
  INFO: 'help',
};

/** The keyword a text is, with its upper-cased word; undefined for an ordinary message. */
export function smsKeyword(text: string): { keyword: SmsKeyword; word: string } | undefined {
  const word = text.trim().toUpperCase();
  const keyword = Object.hasOwn(KEYWORDS, word) ? KEYWORDS[word] : undefined;
  return keyword ? { keyword, word } : undefined;
}

/** The replies the service sends itself (one per keyword texted). */
export function keywordReply(keyword: SmsKeyword, workspaceName: string): string {
  switch (keyword) {
    case 'opt_out':
      return `${workspaceName}: you are unsubscribed and will receive no more messages. Reply START to resubscribe.`;
    case 'opt_in':
      return `${workspaceName}: you are subscribed again. Reply STOP to unsubscribe, HELP for help.`;
    case 'help':
      return `${workspaceName}: reply STOP to unsubscribe, START to resubscribe. Msg&data rates may apply.`;
  }
}
