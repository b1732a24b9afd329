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
    // Rules saved before authors were kept: checked when they were saved, as then.
    if (!author) return null;
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
