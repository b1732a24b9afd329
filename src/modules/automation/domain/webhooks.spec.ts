import { ValidationError } from '../../../core/http/domain-errors';
import {
  isForbiddenAddress,
  literalAddress,
  parseOutboundUrl as parseWebhookUrl,
} from '../../../core/net/outbound-address';
import { buildPayload, matchesFilters } from './payload';
import { signatureHeaders } from './signature';
import { SecretBox } from '../../../core/crypto/secret-box';
import { createHmac, randomBytes } from 'node:crypto';
import { retryAfterMs, retryDelayMs } from '../delivery/deliverer';

describe('webhook URLs', () => {
  it('takes https, and http only when allowed', () => {
    expect(parseWebhookUrl('https://h.example.com/x', { allowHttp: false }, 'f').hostname).toBe(
      'h.example.com',
    );
    expect(() => parseWebhookUrl('http://h.example.com/x', { allowHttp: false }, 'webhookUrl')).toThrow(
      /^webhookUrl: must be an https:\/\/ URL/,
    );
    expect(parseWebhookUrl('http://h.example.com/x', { allowHttp: true }, 'f').protocol).toBe('http:');
    expect(() => parseWebhookUrl('ftp://h/x', { allowHttp: true }, 'f')).toThrow(ValidationError);
    expect(() => parseWebhookUrl('https://u:p@h.example.com/', { allowHttp: false }, 'f')).toThrow(
      /credentials/,
    );
  });

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '224.0.0.1',
    '255.255.255.255',
  ])('refuses %s', (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946'])('allows %s', (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );

  it('recognises IP-literal hosts', () => {
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(literalAddress('localhost')).toBeUndefined();
  });
});

describe('signatures', () => {
  it('signs t=,v1= over "<t>.<body>" and the Standard Webhooks form, with every live secret', () => {
    const body = '{"event":"member:updated"}';
    const h = signatureHeaders(
      ['old-secret-0123456789', 'whsec_' + randomBytes(24).toString('base64')],
      'id-1',
      1700000000,
      body,
    );
    const [t, v1a, v1b] = h['x-webhook-signature'].split(',');
    expect(t).toBe('t=1700000000');
    expect(v1a).toBe(
      `v1=${createHmac('sha256', 'old-secret-0123456789').update(`1700000000.${body}`).digest('hex')}`,
    );
    expect(v1b).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(signatureHeaders([], 'id', 1, body)).toEqual({});
  });

  it('seals secrets so that only the same rule opens them', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('s3cret-value-of-rule', 'eventrule:4');
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'eventrule:4')).toBe('s3cret-value-of-rule');
    expect(() => box.open(sealed, 'eventrule:5')).toThrow();
  });
});

describe('payloads and retries', () => {
  const ctx = {
    eventId: 'e1',
    event: 'chat:summary',
    timestamp: '2026-11-23T10:00:00.000Z',
    workspace: { uuid: 'w1', name: 'Acme' },
    eventRule: { id: 1, uuid: 'r1', name: 'r' },
  };
  it('builds the flat and the envelope shapes', () => {
    expect(buildPayload('flat', ctx, { chat: { id: 3 } })).toEqual({
      event: 'chat:summary',
      eventId: 'e1',
      timestamp: ctx.timestamp,
      workspace: ctx.workspace,
      eventRule: ctx.eventRule,
      chat: { id: 3 },
    });
    expect(buildPayload('envelope', ctx, { chat: { id: 3 } })).toEqual({
      eventType: 'chat:summary',
      timestamp: ctx.timestamp,
      workspaceId: 'w1',
      data: { id: 'e1', chat: { id: 3 } },
    });
  });
  it('filters chat:summary by channel and workflow', () => {
    expect(matchesFilters({ channel: 'sms' }, { chat: { channel: 'sms' } })).toBe(true);
    expect(matchesFilters({ channel: 'sms' }, { channel: 'email' })).toBe(false);
    expect(matchesFilters({ workflowUuid: 'w' }, { workflow: { uuid: 'w' } })).toBe(true);
    expect(matchesFilters({}, {})).toBe(true);
  });
  it('jitters retry delays by ±20% and reads Retry-After', () => {
    expect(retryDelayMs([1000, 2000], 2, 0)).toBe(1600);
    expect(retryDelayMs([1000, 2000], 2, 1)).toBe(2400);
    expect(retryDelayMs([1000, 2000], 3)).toBeNull();
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(50_000);
    expect(retryAfterMs('soon')).toBeNull();
  });
  it('reads Retry-After as RFC 9110 has it, and nothing else as a date', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    // The three HTTP-date forms, all GMT (asctime's names no zone), an hour on.
    for (const v of [
      'Tue, 24 Nov 2026 13:00:00 GMT',
      'Tuesday, 24-Nov-26 13:00:00 GMT',
      'Tue Nov 24 13:00:00 2026',
    ])
      expect([v, retryAfterMs(v, now)]).toEqual([v, 3_600_000]);
    expect(retryAfterMs('  120 ', now)).toBe(120_000);
    expect(retryAfterMs('9'.repeat(400), now)).toBe(24 * 3600 * 1000);
    expect(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(0);
    // Garbage a lenient date parser reads a year or a day into is no Retry-After.
    for (const v of [
      'soon 2030',
      '2030 maybe',
      '1.5',
      '-1',
      '+60',
      '1,2',
      '0x10',
      '1e3',
      'Infinity',
      '2030-01-01',
    ])
      expect([v, retryAfterMs(v, now)]).toEqual([v, null]);
  });
});
