import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { customToolkitDecider, CustomToolkitCommand, ToolkitInput } from '../domain/toolkit';
import { toolkitSlugClaims, toolkitSlugConflict } from '../domain/toolkit-slug-claim';
import { customToolkitStream } from '../domain/toolkit.events';

export class CreateCustomToolkitCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: ToolkitInput,
  ) {}
}

export class UpdateCustomToolkitCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly changes: Partial<ToolkitInput>,
    /** If-Match: the toolkit versions the change may apply to. */
    readonly ifMatch?: number[],
  ) {}
}

export class SetCustomToolkitEnabledCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly enabled: boolean,
  ) {}
}

export class DeleteCustomToolkitCommand {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly ifMatch?: number[],
  ) {}
}

/**
 * The toolkit's stream decides every change of it and of its tools. If-Match is checked by
 * the decider against the version of the resource addressed (the toolkit's or one tool's),
 * not the stream's revision: a change of one tool does not make a write to another stale.
 */
export async function decideOnToolkit(
  repo: EventSourcedRepository,
  command: CustomToolkitCommand,
): Promise<void> {
  const movesSlug =
    command.type === 'CreateToolkit' || command.type === 'UpdateToolkit' || command.type === 'DeleteToolkit';
  try {
    await repo.handle({
      streamName: customToolkitStream(command.toolkitId),
      workspaceId: command.workspaceId,
      decider: customToolkitDecider,
      command,
      // Only toolkit writes move the slug; tool writes append without claims.
      ...(movesSlug ? { claims: toolkitSlugClaims } : {}),
    });
  } catch (error) {
    if (error instanceof ClaimTakenError) throw toolkitSlugConflict(error, error.value);
    throw error;
  }
}

const now = () => new Date().toISOString();

/** Creates a toolkit (enabled) and claims its slug in the workspace. Returns its id. */
@CommandHandler(CreateCustomToolkitCommand)
export class CreateCustomToolkitHandler implements ICommandHandler<CreateCustomToolkitCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async execute({ workspaceId, input }: CreateCustomToolkitCommand): Promise<number> {
    const toolkitId = await nextId(this.db, 'custom_toolkit_id_seq');
    await decideOnToolkit(this.repo, { type: 'CreateToolkit', toolkitId, workspaceId, now: now(), ...input });
    return toolkitId;
  }
}

@CommandHandler(UpdateCustomToolkitCommand)
export class UpdateCustomToolkitHandler implements ICommandHandler<UpdateCustomToolkitCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, toolkitId, changes, ifMatch }: UpdateCustomToolkitCommand): Promise<void> {
    await decideOnToolkit(this.repo, {
      type: 'UpdateToolkit',
      toolkitId,
      workspaceId,
      ifMatch,
      now: now(),
      ...changes,
    });
  }
}

/** Enable and disable are idempotent: the state asked for already holds, nothing is appended. */
@CommandHandler(SetCustomToolkitEnabledCommand)
export class SetCustomToolkitEnabledHandler implements ICommandHandler<SetCustomToolkitEnabledCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, toolkitId, enabled }: SetCustomToolkitEnabledCommand): Promise<void> {
    await decideOnToolkit(this.repo, {
      type: enabled ? 'EnableToolkit' : 'DisableToolkit',
      toolkitId,
      workspaceId,
      now: now(),
    });
  }
}

/** Deletes a toolkit with all its tools, and frees its slug. */
@CommandHandler(DeleteCustomToolkitCommand)
export class DeleteCustomToolkitHandler implements ICommandHandler<DeleteCustomToolkitCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, toolkitId, ifMatch }: DeleteCustomToolkitCommand): Promise<void> {
    await decideOnToolkit(this.repo, { type: 'DeleteToolkit', toolkitId, workspaceId, ifMatch, now: now() });
  }
}
