import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { jobIdFor } from '../../../core/reactors/reactor';
import { DELIVERY_NAMESPACE, deliveryIdFor, deliveryJobIdFor } from './deliver-when-matched.reactor';

/**
 * Delivery ids and job ids are what make a replay find the same delivery and enqueue
 * nothing twice: the reactor's own computations must give exactly what `uuid`'s v5 and
 * core's jobIdFor give (ids made before them are in logs and queues).
 */
describe('delivery ids', () => {
  const events = [randomUUID(), randomUUID(), '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'];
  const rules = [1, 7, 42, 123456];

  it('deliveryIdFor is uuid v5 of "<event id>/<rule id>" in the delivery namespace', () => {
    for (const e of events)
      for (const r of rules) expect(deliveryIdFor(e, r)).toBe(uuidv5(`${e}/${r}`, DELIVERY_NAMESPACE));
  });

  it("deliveryJobIdFor is core's jobIdFor(event, rule:<id>), cached per rule or not", () => {
    for (let round = 0; round < 2; round++)
      for (const e of events)
        for (const r of rules) expect(deliveryJobIdFor({ id: e }, r)).toBe(jobIdFor({ id: e }, `rule:${r}`));
  });
});
