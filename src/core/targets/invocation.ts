// How a runner command starts on this machine: argv, environment. Its own module so that both
// runnerCli.ts and target.ts can use it without importing each other.
import * as path from 'node:path';

/** How to start the runner. Everything is passed as argv: no shell ever parses a path. */
export interface RunnerConfig {
  /** The Python that has MindSpore (and usually the runner) installed. */
  python: string;
  /** Put on PYTHONPATH, for a runner folder that is not installed into that Python. */
  runnerDir?: string;
  /** Arguments before the subcommand; `-m ascend_finetune` unless a test swaps the runner. */
  launcher?: readonly string[];
  /** Extra environment (e.g. from CANN's set_env.sh). */
  env?: NodeJS.ProcessEnv;
}

export interface Invocation {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export function invocation(runner: RunnerConfig, args: readonly string[]): Invocation {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...runner.env,
    // Python block-buffers a pipe; events must arrive as they are written.
    PYTHONUNBUFFERED: '1',
  };
  if (runner.runnerDir) {
    env.PYTHONPATH = env.PYTHONPATH ? runner.runnerDir + path.delimiter + env.PYTHONPATH : runner.runnerDir;
  }
  return { file: runner.python, args: [...(runner.launcher ?? ['-m', 'ascend_finetune']), ...args], env };
}
