import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  Credential,
  Membership,
  MEMBERSHIP_RESOLVER,
  MembershipResolver,
} from '../../../core/auth/principal';
import { intersectScopes } from '../../../core/auth/scopes';
import type { RuleAuthor } from '../domain/event-rule.events';
import { deliveryRefusal } from '../domain/rule-access.policy';
import type { DeliveryToSend } from './delivery-log';

export const NO_AUTHOR =
  "the rule has no recorded author (it was saved before authors were kept), so no member's reach bounds what it sends; save it again with PUT to make the caller its author";

/**
 * The delivery-time half of the rule access policy: what the rule's author may read now,
 * the scopes of the credential that saved it ∩ the author member's current role (as the
 * auth guard computes a request's). Memberships come from identity's resolver, whose cache
 * is emptied by every role or membership change, so a demoted or removed author's rule
 * stops delivering from the next delivery on.
 */
@Injectable()
export class AuthorReach {
  private resolver?: MembershipResolver;
  /**
   * The author's reach per cached membership (a new one after every role or membership
   * change) and credential scopes: one list per pair, so `grants` parses it once.
   */
  private readonly reach = new WeakMap<Membership, Map<string, readonly string[]>>();

  constructor(private readonly modules: ModuleRef) {}

  /** Why this delivery must not be sent (logged as its failed attempt); null when it may. */
  async refusal(delivery: DeliveryToSend): Promise<string | null> {
    const author = delivery.rule?.author;
    // A rule without an author (saved before authors were kept) has no reach to bound what
    // it sends, and every event type's payload needs a read scope: nothing is sent until an
    // allowed caller saves it again (PUT checks the caller's reach and makes it the author).
    if (!author) return NO_AUTHOR;
    const scopes = await this.scopesOf(delivery.workspaceId, author);
    if (!scopes) return "the rule's author is no longer an active member of the workspace";
    return deliveryRefusal(scopes, delivery.eventType, delivery.body);
  }

  private async scopesOf(workspaceId: string, author: RuleAuthor): Promise<readonly string[] | null> {
    this.resolver ??= this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
    const credential: Credential = {
      kind: author.credentialKind as Credential['kind'],
      credentialId: `rule-author:${author.memberId}`,
      accountUuid: author.accountUuid,
      scopes: author.credentialScopes,
      memberId: author.memberId,
    };
    const membership = await this.resolver.find(workspaceId, credential);
    if (!membership || membership.memberId !== author.memberId) return null;
    let byScopes = this.reach.get(membership);
    if (!byScopes) this.reach.set(membership, (byScopes = new Map()));
    const key = author.credentialScopes.join(' ');
    let scopes = byScopes.get(key);
    if (!scopes)
      byScopes.set(key, (scopes = intersectScopes(author.credentialScopes, membership.roleScopes)));
    return scopes;
  }
}
