import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../app.migrations';
import { ENTITIES } from '../app.entities';
import { AppConfig } from '../core/config/config';
import { requestContext, SYSTEM_ACTOR } from '../core/cqrs/request-context';
import { createDataSource } from '../core/database/data-source';
import { ensureDatabase } from '../core/database/ensure-database';
import { runMigrationsLocked } from '../core/database/migrate';
import { ConsistencyWaiter } from '../core/projections/consistency';
import { BootstrapService } from '../modules/identity/bootstrap/bootstrap.service';
import { withAppContext } from './app-context';
import { ParsedArgs, requireFlag } from './args';

export type CliCommand = (args: ParsedArgs, config: AppConfig, out: (line: string) => void) => Promise<void>;

export const migrate: CliCommand = async (_args, config, out) => {
  await ensureDatabase(config.databaseUrl);
  const ds: DataSource = createDataSource({
    url: config.databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    poolSize: 2,
  });
  await ds.initialize();
  try {
    const applied = await runMigrationsLocked(ds);
    out(
      applied.length
        ? `Applied ${applied.length} migration(s): ${applied.join(', ')}`
        : 'Database is up to date',
    );
  } finally {
    await ds.destroy();
  }
};

/** bootstrap --workspace <name> --email <email> [--json] */
export const bootstrap: CliCommand = async (args, config, out) => {
  const workspaceName = requireFlag(args, 'workspace');
  const email = requireFlag(args, 'email');
  const result = await withAppContext(config, async (app) => {
    const ctx = {
      requestId: `cli-bootstrap-${Date.now()}`,
      actor: { ...SYSTEM_ACTOR, id: 'cli' },
      appended: [],
    };
    const res = await requestContext.run(ctx, () =>
      app.get(BootstrapService).bootstrap({ workspaceName, email }),
    );
    // Return only once the read models show the new workspace, member and key.
    await app.get(ConsistencyWaiter).waitFor(ctx.appended, Math.max(config.readYourWritesTimeoutMs, 15_000));
    return res;
  });
  if (args.flags.json) {
    out(JSON.stringify(result));
  } else {
    out(`Workspace ${result.workspaceId} created`);
    out(`Account ${result.accountUuid}, member ${result.memberId}`);
    out(`API key (shown once, store it now): ${result.apiKey}`);
  }
};
