/**
 * A feature's behaviour as pure functions (emmett style): `decide` turns a command and
 * the current state into new events or throws a domain error; `evolve` folds events
 * into state. Time and ids come in on the command, so specs are deterministic.
 */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /**
   * Whether EventSourcedRepository's per-process aggregate cache may hold this state
   * (absent: always). An aggregate whose state grows with its history (a chat's
   * deliveries) bounds what a process keeps of it; one it refuses is loaded from the store.
   */
  cacheable?(state: State): boolean;
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  events: readonly Event[],
): State {
  return events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
}
