// The images of a Classify panel on an SSH target: small JPEG thumbnails made where the files are
// (the runner's `thumbs`, the predictions gallery's bounded call), never the files themselves.
import * as path from 'node:path';
import { fetchThumbs } from '../checkpoints/client';
import type { RunOptions } from '../targets/runnerCli';
import type { RunnerConfig } from '../targets/invocation';
import type { Target } from '../targets/target';

/** Images shown per Classify panel from a target: at ~4 KB each (96 px JPEG, base64), ~256 KB in all. */
export const MAX_TARGET_IMAGES = 64;

/** The files a `predict` answer classified (as the runner resolved them: absolute paths on the target). */
export function answeredFiles(raw: unknown): string[] {
  const preds = (raw as { predictions?: unknown })?.predictions;
  if (!Array.isArray(preds)) return [];
  return preds
    .filter(
      (p): p is { file: string } =>
        typeof (p as { file?: unknown })?.file === 'string' && !(p as { error?: unknown }).error,
    )
    .map((p) => p.file);
}

/**
 * data: URLs of thumbnails of `files` (absolute paths on the runner's machine), by file; the first
 * MAX_TARGET_IMAGES only. One `thumbs` call per folder: thumbs reads only inside the folder it is given.
 */
export async function targetImages(
  runner: RunnerConfig | Target,
  files: readonly string[],
  opts?: RunOptions,
): Promise<Map<string, string>> {
  const byDir = new Map<string, string[]>();
  for (const f of files.slice(0, MAX_TARGET_IMAGES)) {
    const dir = path.posix.dirname(f);
    byDir.set(dir, [...(byDir.get(dir) ?? []), path.posix.basename(f)]);
  }
  const out = new Map<string, string>();
  for (const [dir, names] of byDir)
    for (const t of await fetchThumbs(runner, dir, names, opts))
      if (t.jpeg) out.set(path.posix.join(dir, t.file), `data:image/jpeg;base64,${t.jpeg}`);
  return out;
}
