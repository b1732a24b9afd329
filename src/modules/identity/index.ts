/**
 * The identity feature's public surface: what other features may use. Everything else
 * under modules/identity is internal (src/app.features.spec.ts enforces it).
 */
export {
  ListMembershipsOfAccountQuery,
  ListPendingInvitationIdsQuery,
  ListRoleHoldersQuery,
} from './queries/membership.queries';
export type { RoleHolder } from './queries/membership.queries';
export { GetMemberFactsQuery } from './queries/member-facts.query';
export type { MemberFacts } from './queries/member-facts.query';
export { accountStream, memberStream } from './domain/identity.events';
export type { AccountRegistered, MemberCreated, MemberKind } from './domain/identity.events';
export type { MemberEvent, MemberSnapshot, MemberUpdated } from './domain/member.events';
export { MEMBER_UPDATED } from './domain/member.public-events';
export { RecordSmsConsentCommand } from './commands/sms-consent.command';
export { FindOrCreateContactMemberCommand } from './commands/find-or-create-contact.command';
export type { ContactMember } from './commands/find-or-create-contact.command';
export { GetMemberContactsQuery } from './queries/member-contacts.query';
export { FindAccountsByRegisteredEmailQuery } from './queries/registered-email.query';
export { GetAgentPersonaQuery } from './queries/agent-persona.query';
export type { AgentPersona } from './queries/agent-persona.query';
export type { MemberContact } from './queries/member-contacts.query';
export type { MemberOptedInToSms, MemberOptedOutOfSms } from './domain/member.events';
/** For the MCP endpoint's tools (members.search, members.get): what the member routes run. */
export { GetMemberQuery, ListMembersQuery } from './queries/member.queries';
export { ListMembersQueryDto, MEMBER_STATUS_FILTERS } from './http/dto/member.dto';
export { callerOf as memberCallerOf, memberIdOf, visibilityOf as memberVisibilityOf } from './http/caller';
