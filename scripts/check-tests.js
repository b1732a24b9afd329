// Runs before `npm test`: a focused or skipped test left in the tree fails the run
// (jest would otherwise pass with tests silently not running).
const { execSync } = require('node:child_process');

const pattern = String.raw`\b(it|test|describe)\.(only|skip)\(|\bx(it|describe|test)\(|\bf(it|describe)\(`;
let hits = '';
try {
  hits = execSync(`git grep -nE '${pattern}' -- 'src/*.ts' 'test/*.ts' 'src/**/*.ts' 'test/**/*.ts'`, { encoding: 'utf8' });
} catch {
  // git grep exits 1 when nothing matches (or outside a checkout): nothing to report.
}
if (hits.trim()) {
  process.stderr.write(`Focused or skipped tests found:\n${hits}`);
  process.exit(1);
}
