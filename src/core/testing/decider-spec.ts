import { Decider, DomainEvent } from '../cqrs/decider';

/**
 * Decider specs read as the behaviour they pin down:
 *   spec.given([created]).when(update).then([updated])
 *   spec.given([]).when(update).thenThrows(NotFoundError, /not found/)
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const run = () =>
            decider.decide(
              command,
              events.reduce((s, e) => decider.evolve(s, e), decider.initialState()),
            );
          return {
            then(expected: Event[]): void {
              expect(run()).toEqual(expected);
            },
            thenThrows(errorType: new (...args: never[]) => Error, message?: RegExp): void {
              let thrown: unknown;
              try {
                run();
              } catch (err) {
                thrown = err;
              }
              expect(thrown).toBeInstanceOf(errorType);
              if (message) expect((thrown as Error).message).toMatch(message);
            },
          };
        },
      };
    },
  };
}
