import 'reflect-metadata';
import { parseArgs } from '../../../src/cli/args';
import { projectionsCommand } from '../../../src/cli/projections.command';
import { loadConfig } from '../../../src/core/config/config';
import { exitOnStartupError } from '../../../src/core/lifecycle';
import { SpineTestModule } from '../spine-test.module';

/** `projections ...` of the operator CLI, with the spine's test-only projection known to it. */
const args = parseArgs(process.argv.slice(2));
projectionsCommand([SpineTestModule])(
  { ...args, positionals: args.positionals.slice(1) },
  loadConfig(),
  (line) => process.stdout.write(line + '\n'),
)
  .then(() => process.exit(0))
  .catch(exitOnStartupError);
