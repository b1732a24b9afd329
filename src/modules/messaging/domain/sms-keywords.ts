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

/** Punctuation, symbols (emoji too) and spaces around a word. */
const WRAPPING = /^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu;

/**
 * The keyword a text is, with its upper-cased word; undefined for an ordinary message.
 * Compatibility forms (full-width letters) read as their plain letters. Opt-out and help
 * words are also recognised wrapped in punctuation ("STOP.", "Stop!", "'stop'") and the two
 * compound ones spaced or hyphenated ("stop all", "opt-out"): a missed opt-out keeps texting
 * someone who asked not to be. Opt-in words stay exact: "Yes." answering a question is no
 * consent.
 */
export function smsKeyword(text: string): { keyword: SmsKeyword; word: string } | undefined {
  const word = text.normalize('NFKC').trim().toUpperCase();
  const exact = Object.hasOwn(KEYWORDS, word) ? KEYWORDS[word] : undefined;
  if (exact) return { keyword: exact, word };
  const bare = word.replace(WRAPPING, '');
  const joined = /^(STOP|OPT)[\s_-]+(ALL|OUT)$/.test(bare) ? bare.replace(/[\s_-]+/, '') : bare;
  const keyword = Object.hasOwn(KEYWORDS, joined) ? KEYWORDS[joined] : undefined;
  return keyword && keyword !== 'opt_in' ? { keyword, word: joined } : undefined;
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
