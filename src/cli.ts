import 'reflect-metadata';
import { parseArgs, UsageError } from './cli/args';
import { bootstrap, CliCommand, migrate } from './cli/commands';
import { projections, PROJECTIONS_USAGE } from './cli/projections.command';
import { loadConfig } from './core/config/config';
import { exitOnStartupError } from './core/lifecycle';

const COMMANDS: Record<string, CliCommand> = { migrate, bootstrap, projections };

const USAGE = `Usage: npm run cli -- <command>
  migrate                                              apply pending database migrations
  bootstrap --workspace <name> --email <email> [--password-stdin] [--json]
                                                       create a workspace, its first member and an API key;
                                                       with --password-stdin the account's sign-in password is read from stdin
${PROJECTIONS_USAGE}`;

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const [name] = args.positionals;
  const command = name && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${name ? `Unknown command "${name}"\n` : ''}${USAGE}\n`);
    process.exit(2);
  }
  const config = loadConfig();
  try {
    await command({ ...args, positionals: args.positionals.slice(1) }, config, (line) =>
      process.stdout.write(line + '\n'),
    );
  } catch (err) {
    if (err instanceof UsageError || (err instanceof Error && err.name === 'ValidationError')) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
  process.exit(0);
}

if (require.main === module) main(process.argv.slice(2)).catch(exitOnStartupError);
