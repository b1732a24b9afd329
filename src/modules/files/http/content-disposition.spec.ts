import { attachmentDisposition } from './content-disposition';

describe('attachmentDisposition', () => {
  it('quotes a safe ASCII fallback and gives the exact name in filename*', () => {
    expect(attachmentDisposition('report.pdf')).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
    expect(attachmentDisposition('a "b"\\c%.txt')).toBe(
      `attachment; filename="a _b__c_.txt"; filename*=UTF-8''a%20%22b%22%5Cc%25.txt`,
    );
    expect(attachmentDisposition("it's (1)*.txt")).toBe(
      `attachment; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`,
    );
    expect(attachmentDisposition('日本.txt')).toBe(
      `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`,
    );
  });
});
