/**
 * `npm run bench -- [name...]`: runs the named benchmarks (default: all), one after
 * another, so they do not compete for the machine.
 */
import { run as eventStore } from './event-store.bench';
import { run as http } from './http.bench';
import { run as memberImport } from './member-import.bench';
import { run as webhooks } from './webhooks.bench';
import { run as records } from './records.bench';
import { run as oauth } from './oauth.bench';
import { run as messaging } from './messaging.bench';
import { run as assistant } from './assistant.bench';

const BENCHES: Record<string, () => Promise<void>> = {
  'event-store': eventStore,
  'member-import': memberImport,
  http,
  webhooks,
  records,
  oauth,
  messaging,
  assistant,
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = asked.length > 0 ? asked : Object.keys(BENCHES);
  const unknown = names.filter((n) => !BENCHES[n]);
  if (unknown.length > 0) {
    console.error(`Unknown bench: ${unknown.join(', ')}. Known: ${Object.keys(BENCHES).join(', ')}`);
    process.exit(2);
  }
  for (const name of names) {
    console.log(`\n== ${name} ==`);
    await BENCHES[name]();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
