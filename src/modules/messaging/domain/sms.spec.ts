import { keywordReply, smsKeyword } from './sms-keywords';
import { smsSegments } from './sms-segments';

describe('SMS segments', () => {
  it('fits 160 GSM-7 characters in one segment, 161 in two of 153', () => {
    expect(smsSegments('a'.repeat(160))).toEqual({ encoding: 'GSM-7', segments: 1 });
    expect(smsSegments('a'.repeat(161))).toEqual({ encoding: 'GSM-7', segments: 2 });
    expect(smsSegments('a'.repeat(306))).toEqual({ encoding: 'GSM-7', segments: 2 });
    expect(smsSegments('a'.repeat(307))).toEqual({ encoding: 'GSM-7', segments: 3 });
  });

  it('counts extension characters twice and never splits them', () => {
    expect(smsSegments('€'.repeat(80))).toEqual({ encoding: 'GSM-7', segments: 1 });
    expect(smsSegments('€'.repeat(81))).toEqual({ encoding: 'GSM-7', segments: 2 });
    // 152 septets, then a two-septet character that must move to the next segment.
    expect(smsSegments('a'.repeat(152) + '{' + 'a'.repeat(10)).segments).toBe(2);
  });

  it('switches to UCS-2 for any character outside GSM 03.38: 70, then 67 per segment', () => {
    expect(smsSegments('é'.repeat(70))).toEqual({ encoding: 'GSM-7', segments: 1 });
    expect(smsSegments('ł'.repeat(70))).toEqual({ encoding: 'UCS-2', segments: 1 });
    expect(smsSegments('ł'.repeat(71))).toEqual({ encoding: 'UCS-2', segments: 2 });
    expect(smsSegments('ł'.repeat(134))).toEqual({ encoding: 'UCS-2', segments: 2 });
    expect(smsSegments('ł'.repeat(135))).toEqual({ encoding: 'UCS-2', segments: 3 });
  });

  it('keeps a surrogate pair (emoji) in one segment', () => {
    expect(smsSegments('😀'.repeat(35))).toEqual({ encoding: 'UCS-2', segments: 1 });
    expect(smsSegments('a' + '😀'.repeat(34))).toEqual({ encoding: 'UCS-2', segments: 1 });
    expect(smsSegments('a' + '😀'.repeat(35))).toEqual({ encoding: 'UCS-2', segments: 2 });
  });
});

describe('SMS keywords', () => {
  it.each(['STOP', 'stop', ' Stop ', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT'])(
    '%p opts out',
    (text) => expect(smsKeyword(text)?.keyword).toBe('opt_out'),
  );
  it.each(['START', 'yes', 'UNSTOP'])('%p opts back in', (text) =>
    expect(smsKeyword(text)?.keyword).toBe('opt_in'),
  );
  it.each(['HELP', 'info'])('%p asks for help', (text) => expect(smsKeyword(text)?.keyword).toBe('help'));
  it.each(['STOP.', 'Stop!', '"stop"', 'stop 🙏', 'ＳＴＯＰ', 'stop all', 'Stop-All', 'opt out', 'Opt-Out.'])(
    '%p opts out too (punctuation, compatibility forms, a spaced compound word)',
    (text) => expect(smsKeyword(text)?.keyword).toBe('opt_out'),
  );
  it('names the plain keyword of a wrapped or spaced one', () => {
    expect(smsKeyword('stop all!')?.word).toBe('STOPALL');
    expect(smsKeyword('Help?')).toEqual({ keyword: 'help', word: 'HELP' });
  });
  it.each(['Yes.', 'yes!', 'Start?', '"UNSTOP"'])(
    '%p does not opt in: only the exact word is consent',
    (text) => expect(smsKeyword(text)).toBeUndefined(),
  );
  it.each([
    'STOP please',
    'S T O P',
    'stop all now',
    'opt all',
    '...',
    'stopp',
    '',
    'hello',
    'constructor',
    '__proto__',
  ])('%p is an ordinary message', (text) => expect(smsKeyword(text)).toBeUndefined());
  it('names the workspace in each reply', () => {
    for (const k of ['opt_out', 'opt_in', 'help'] as const)
      expect(keywordReply(k, 'Acme')).toMatch(/^Acme: /);
  });
});
