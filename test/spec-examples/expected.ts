// The shared examples and their expected problems (NAME.expected.json next to NAME.ascend.*),
// for the TypeScript tests; test/runner/test_spec_examples.py reads the same files.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const EXAMPLES_DIR = __dirname;
export const EXAMPLES = readdirSync(EXAMPLES_DIR).filter((f) => /\.ascend\.(json|ya?ml)$/.test(f)).sort();

export interface Expected {
  path: string;
  message: string;
  fix: string;
  /** 1-based line of the diagnostic in the editor. */
  line: number;
  /** The text the diagnostic's range covers. */
  text?: string;
}

/** The problems an example must give; none for a valid example (no sidecar). */
export function expectedOf(file: string): Expected[] {
  try {
    return JSON.parse(readFileSync(path.join(EXAMPLES_DIR, `${file.split('.ascend.')[0]}.expected.json`), 'utf8')).problems;
  } catch {
    return [];
  }
}
