import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import type { ToolInput, ToolUpdateInput } from '../domain/toolkit';
import { decideOnToolkit } from './toolkit.commands';

export class CreateCustomToolCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly input: ToolInput,
  ) {}
}

export class UpdateCustomToolCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly toolId: number,
    readonly changes: ToolUpdateInput,
    /** If-Match: the tool versions the change may apply to. */
    readonly ifMatch?: number[],
  ) {}
}

export class DeleteCustomToolCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly toolId: number,
    readonly ifMatch?: number[],
  ) {}
}

const now = () => new Date().toISOString();

/** Adds a tool to a toolkit of the workspace (its name free in the toolkit). Returns its id. */
@CommandHandler(CreateCustomToolCommand)
export class CreateCustomToolHandler implements ICommandHandler<CreateCustomToolCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async execute({ workspaceId, toolkitId, input }: CreateCustomToolCommand): Promise<number> {
    const toolId = await nextId(this.db, 'custom_tool_id_seq');
    await decideOnToolkit(this.repo, {
      type: 'CreateTool',
      toolkitId,
      toolId,
      workspaceId,
      now: now(),
      ...input,
    });
    return toolId;
  }
}

@CommandHandler(UpdateCustomToolCommand)
export class UpdateCustomToolHandler implements ICommandHandler<UpdateCustomToolCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: UpdateCustomToolCommand): Promise<void> {
    const { workspaceId, toolkitId, toolId, changes, ifMatch } = cmd;
    await decideOnToolkit(this.repo, {
      type: 'UpdateTool',
      toolkitId,
      toolId,
      workspaceId,
      ifMatch,
      now: now(),
      ...changes,
    });
  }
}

@CommandHandler(DeleteCustomToolCommand)
export class DeleteCustomToolHandler implements ICommandHandler<DeleteCustomToolCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, toolkitId, toolId, ifMatch }: DeleteCustomToolCommand): Promise<void> {
    await decideOnToolkit(this.repo, {
      type: 'DeleteTool',
      toolkitId,
      toolId,
      workspaceId,
      ifMatch,
      now: now(),
    });
  }
}
