import { Module } from '@nestjs/common';
import { MEMBERSHIP_RESOLVER } from '../../core/auth/principal';
import { Feature } from '../../core/features/feature';
import { withQueues } from '../../core/queues/queues.module';
import { IdentityMembershipResolver } from './auth/identity-resolvers';
import { MemberTokenCredentialResolver } from './auth/member-token.resolver';
import { BootstrapService } from './bootstrap/bootstrap.service';
import { AcceptInvitationHandler } from './commands/accept-invitation.command';
import { DeclineInvitationHandler } from './commands/decline-invitation.command';
import { AccountService } from './commands/accounts.service';
import { CreateSignupHandler } from './commands/create-signup.command';
import { ImportMembersHandler } from './commands/import-members.command';
import { CreateInvitationHandler, RevokeInvitationHandler } from './commands/invitation.commands';
import { RevokeOwnMemberTokenHandler, UpdateMeHandler } from './commands/me.commands';
import {
  ArchiveMemberHandler,
  RevokeMemberTokensHandler,
  UpdateMemberHandler,
} from './commands/member.commands';
import { MemberTokenService } from './commands/member-tokens.service';
import { MemberWriter } from './commands/member-writer.service';
import { RoleLookup } from './commands/role-lookup.service';
import { IDENTITY_PUBLIC_EVENTS } from './domain/member.public-events';
import { Identity1764000002000 } from './identity.migration';
import { InvitationsController } from './http/invitations.controller';
import { MeController } from './http/me.controller';
import { MembersController } from './http/members.controller';
import { SignupController } from './http/signup.controller';
import { AccountEntity, MemberEntity } from './projections/identity.entities';
import { InvitationsProjection } from './projections/invitations.projection';
import { InvitationEntity, MemberTokenEntity } from './projections/member.entities';
import { MembersProjection } from './projections/members.projection';
import { MemberVersions } from './projections/member-versions';
import { MemberListAnnouncer } from './projections/member-list-announcer';
import {
  GetInvitationHandler,
  ListInvitationsHandler,
  ListMyInvitationsHandler,
} from './queries/invitation.queries';
import { GetMeHandler } from './queries/me.query';
import {
  ListMembershipsOfAccountHandler,
  ListPendingInvitationIdsHandler,
  ListRoleHoldersHandler,
} from './queries/membership.queries';
import { GetMemberHandler, ListMembersHandler } from './queries/member.queries';
import { GetMemberFactsHandler } from './queries/member-facts.query';
import { GetAgentPersonaHandler } from './queries/agent-persona.query';
import { AccountEmailVerified1764000006300 } from './account-email.migration';
import { IdentityExpiry1764000006200 } from './expiry.migration';
import { MemberTimezone1764000008910 } from './member-timezone.migration';
import { MemberAgentSettings1764000009450 } from './agent-settings.migration';
import { IdentityMembers1764000002500 } from './members.migration';
import { MemberClaims1764000006400 } from './member-claims.migration';
import { MemberCounts1764000008500 } from './member-counts.migration';
import { MemberListVersions1764000010000 } from './member-list-versions.migration';
import { AccountLoginEmail1764000010300 } from './account-login-email.migration';
import { MemberTokensInMembers1764000010320 } from './member-tokens-in-members.migration';

import { FindOrCreateContactMemberHandler } from './commands/find-or-create-contact.command';
import { RecordSmsConsentHandler } from './commands/sms-consent.command';
import { GetMemberContactsHandler } from './queries/member-contacts.query';
import { FindAccountsByRegisteredEmailHandler } from './queries/registered-email.query';
import { ExpireWhenLapsedReactor } from './reactors/expire-when-lapsed.reactor';
import { EXPIRY_QUEUE, ExpiryProcessor } from './workers/expiry.processor';

/**
 * Accounts, members (signup, CRUD, import), member tokens and invitations. Lapsed
 * invitations and tokens are recorded by a reactor and a queue worker.
 */
@Feature({
  name: 'identity',
  entities: [AccountEntity, MemberEntity, MemberTokenEntity, InvitationEntity],
  migrations: [
    Identity1764000002000,
    IdentityMembers1764000002500,
    IdentityExpiry1764000006200,
    AccountEmailVerified1764000006300,
    MemberClaims1764000006400,
    MemberCounts1764000008500,
    MemberTimezone1764000008910,
    MemberAgentSettings1764000009450,
    MemberListVersions1764000010000,
    AccountLoginEmail1764000010300,
    MemberTokensInMembers1764000010320,
  ],
  versionedResources: ['members'],
  publicEvents: IDENTITY_PUBLIC_EVENTS,
})
@Module(
  withQueues(
    { queues: [EXPIRY_QUEUE], processors: [ExpiryProcessor] },
    {
      controllers: [SignupController, MembersController, MeController, InvitationsController],
      providers: [
        MembersProjection,
        MemberVersions,
        MemberListAnnouncer,
        InvitationsProjection,
        ExpireWhenLapsedReactor,
        BootstrapService,
        MemberTokenCredentialResolver,
        { provide: MEMBERSHIP_RESOLVER, useClass: IdentityMembershipResolver },
        RoleLookup,
        MemberWriter,
        AccountService,
        MemberTokenService,
        CreateSignupHandler,
        UpdateMemberHandler,
        ArchiveMemberHandler,
        RevokeMemberTokensHandler,
        ImportMembersHandler,
        CreateInvitationHandler,
        RevokeInvitationHandler,
        AcceptInvitationHandler,
        DeclineInvitationHandler,
        UpdateMeHandler,
        RevokeOwnMemberTokenHandler,
        ListMembersHandler,
        GetMemberHandler,
        GetMeHandler,
        ListInvitationsHandler,
        GetInvitationHandler,
        ListMyInvitationsHandler,
        ListRoleHoldersHandler,
        GetMemberFactsHandler,
        GetAgentPersonaHandler,
        ListPendingInvitationIdsHandler,
        ListMembershipsOfAccountHandler,
        RecordSmsConsentHandler,
        FindOrCreateContactMemberHandler,
        GetMemberContactsHandler,
        FindAccountsByRegisteredEmailHandler,
      ],
      exports: [MEMBERSHIP_RESOLVER, BootstrapService],
    },
  ),
)
export class IdentityModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    members: true;
  }
}
