import { delay } from '../testing/event-store.conformance';
import { ThrottledNotifier } from './postgres-append-listener';

describe('ThrottledNotifier', () => {
  it('lets a statement carry the notification once per interval, and sends it itself when that statement fails', async () => {
    let sends = 0;
    const notifier = new ThrottledNotifier(() => Promise.resolve(sends++), 30);
    try {
      // After a quiet spell the first write carries it; the next, within the interval, may not.
      expect(notifier.claim()).toBe(true);
      notifier.settle(true);
      expect(notifier.claim()).toBe(false);
      notifier.request();
      await delay(40);
      // Past the interval a write carries the pending request too: no separate send.
      expect(notifier.claim()).toBe(true);
      notifier.settle(true);
      await delay(100);
      expect(sends).toBe(0);

      // A carrying write that failed: the pending request is sent on its own.
      expect(notifier.claim()).toBe(true);
      notifier.settle(true);
      notifier.request();
      await delay(40);
      expect(notifier.claim()).toBe(true);
      notifier.settle(false);
      await delay(250);
      expect(sends).toBe(1);

      // Nothing carries: sent within two intervals of the last notification.
      notifier.request();
      await delay(250);
      expect(sends).toBe(2);
    } finally {
      await notifier.close();
    }
  });
});
