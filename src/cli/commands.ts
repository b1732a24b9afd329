import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../app.migrations';
import { ENTITIES } from '../app.entities';
import { AppConfig } from '../core/config/config';
import { requestContext, SYSTEM_ACTOR } from '../core/cqrs/request-context';
import { createDataSource } from '../core/database/data-source';
import { ensureDatabase } from '../core/database/ensure-database';
import { runMigrationsLocked } from '../core/database/migrate';
import { ConsistencyWaiter } from '../core/projections/consistency';
import { CommandBus } from '@nestjs/cqrs';
import { BootstrapService } from '../modules/identity/bootstrap/bootstrap.service';
import { checkPassword, SetAccountPasswordCommand } from '../modules/oauth';
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

/** The whole of stdin, without its final line break: a password piped in (never an argument, which `ps` shows). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** bootstrap --workspace <name> --email <email> [--password-stdin] [--json] */
export const bootstrap: CliCommand = async (args, config, out) => {
  const workspaceName = requireFlag(args, 'workspace');
  const email = requireFlag(args, 'email');
  // Checked before anything is created, so a refused password leaves no half-made workspace.
  const password = args.flags['password-stdin'] ? checkPassword(await readStdin(), 'password') : undefined;
  const result = await withAppContext(config, async (app) => {
    const ctx = {
      requestId: `cli-bootstrap-${Date.now()}`,
      actor: { ...SYSTEM_ACTOR, id: 'cli' },
      appended: [],
    };
    const res = await requestContext.run(ctx, async () => {
      const created = await app.get(BootstrapService).bootstrap({ workspaceName, email });
      // The account's password for the OAuth sign-in page, set by the operator (no current one to prove).
      if (password !== undefined)
        await app
          .get(CommandBus)
          .execute(new SetAccountPasswordCommand(created.accountUuid, password, undefined, true));
      return created;
    });
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
