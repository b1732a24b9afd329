export type MemberKind = 'person' | 'agent';

export interface AccountRegistered {
  type: 'AccountRegistered';
  data: {
    accountUuid: string;
    email: string | null;
    phone: string | null;
    name: string | null;
    createdAt: string;
  };
}

export interface MemberCreated {
  type: 'MemberCreated';
  data: {
    memberId: number;
    workspaceId: string;
    /** null: a contact without a login identity yet (imported); signup links one later. */
    accountUuid: string | null;
    email: string | null;
    phone: string | null;
    name: string | null;
    externalId: string | null;
    memberRoleId: number;
    kind: MemberKind;
    notifySms: boolean;
    notifyEmail: boolean;
    notifyVoice: boolean;
    /** Agent members only: the model and instructions of their chats' assistant (see MemberSnapshot). */
    agentModel?: string | null;
    agentInstructions?: string | null;
    createdAt: string;
  };
}

export const accountStream = (uuid: string): string => `account-${uuid}`;
export const memberStream = (id: number): string => `member-${id}`;
