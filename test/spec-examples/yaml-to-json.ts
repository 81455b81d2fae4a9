// The extension's YAML -> JSON step (src/core/spec/file.ts) for the runner's side of the shared
// examples: `node --import tsx yaml-to-json.ts FILE...` prints {file: spec} as JSON.
import { readFileSync } from 'node:fs';
import { parseSpecText } from '../../src/core/spec/file';

const out: Record<string, unknown> = {};
for (const f of process.argv.slice(2)) out[f] = parseSpecText(readFileSync(f, 'utf8'), f);
process.stdout.write(JSON.stringify(out));
