/**
 * The automation feature's public surface. Other features need nothing from it: rules
 * subscribe to their public events through the catalogue (core/events), never to them.
 */
export { AutomationModule } from './automation.module';
export type { EventRuleEvent } from './domain/event-rule.events';
export { CANONICAL_EVENT_TYPES, EVENT_TYPE_ALIASES } from './domain/event-types';
