/**
 * The identity feature's public surface: what other features may use. Everything else
 * under modules/identity is internal (src/app.features.spec.ts enforces it).
 */
export {
  GetMemberContactsQuery,
  ListMembershipsOfAccountQuery,
  ListPendingInvitationIdsQuery,
  ListRoleHoldersQuery,
} from './queries/membership.queries';
export type { MemberContact, RoleHolder } from './queries/membership.queries';
export { GetMemberFactsQuery } from './queries/member-facts.query';
export type { MemberFacts } from './queries/member-facts.query';
export { accountStream, memberStream } from './domain/identity.events';
export type { AccountRegistered, MemberCreated, MemberKind } from './domain/identity.events';
export type { MemberEvent, MemberSnapshot, MemberUpdated } from './domain/member.events';
export { MEMBER_UPDATED } from './domain/member.public-events';
