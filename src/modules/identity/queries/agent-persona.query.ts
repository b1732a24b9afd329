import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';

/** An agent member as a chat's assistant speaks for it: its name, model and instructions. */
export interface AgentPersona {
  memberId: number;
  name: string | null;
  /** The model its chats' replies use; null: the service's ASSISTANT_MODEL. */
  model: string | null;
  /** Put into the assistant's system prompt; null: none. */
  instructions: string | null;
  status: 'active' | 'archived';
}

/**
 * The persona of an agent member of one workspace (the assistant asks it for a chat's
 * workflow agent); null for a person, a member of another workspace, or none.
 */
export class GetAgentPersonaQuery {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
  ) {}
}

@QueryHandler(GetAgentPersonaQuery)
export class GetAgentPersonaHandler implements IQueryHandler<GetAgentPersonaQuery, AgentPersona | null> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetAgentPersonaQuery): Promise<AgentPersona | null> {
    const rows = (await this.db.query(
      `SELECT id, name, agent_model, agent_instructions, status FROM members
        WHERE workspace_id = $1 AND id = $2 AND kind = 'agent'`,
      [q.workspaceId, q.memberId],
    )) as {
      id: number;
      name: string | null;
      agent_model: string | null;
      agent_instructions: string | null;
      status: 'active' | 'archived';
    }[];
    const r = rows[0];
    return r
      ? {
          memberId: r.id,
          name: r.name,
          model: r.agent_model,
          instructions: r.agent_instructions,
          status: r.status,
        }
      : null;
  }
}
