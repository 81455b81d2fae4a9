// What a spec's paths are on the SSH target it is meant for. The server cannot reach the target: it
// asks the extension (PROBE_REQUEST), which answers from its cache or the runner's `probe`. Nothing
// waits for the answer: a spec is diagnosed at once without it, and again when it comes.
import * as path from 'node:path';
import { absolutizeSpecPaths } from '../core/spec/builder';
import { pathFields } from '../core/spec/schema';
import { isNamedWeights } from '../core/spec/weightSources';
import { asProbeResult, type ProbeParams, type ProbeResult, type SpecTargetInfo } from '../shared/specProtocol';
import type { RemoteFacts } from './diagnostics';
import type { SpecDocument } from './specDocument';

/** A path field and the path the runner will open for it on the target. */
export interface WantedPath {
  field: string;
  path: string;
}

/** The spec's path fields as "Start fine-tune" sends them: relative ones joined to the spec's folder. */
export function wantedPaths(doc: SpecDocument, baseDir: string): WantedPath[] {
  const spec = absolutizeSpecPaths(doc.value, baseDir, path.join);
  const out: WantedPath[] = [];
  for (const { path: dotted } of pathFields()) {
    let v: unknown = spec;
    for (const seg of dotted.split('.'))
      v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[seg] : undefined;
    if (typeof v === 'string' && v !== '' && !isNamedWeights(v)) out.push({ field: dotted, path: v });
  }
  return out;
}

interface DocState {
  /** The target and paths `result` is about. */
  key: string;
  result?: ProbeResult;
  /** When `result` came. */
  at: number;
  inFlight: boolean;
}

export interface RemoteFactsOptions {
  /** An answer older than this is shown but asked again at the next edit: files on the target change. */
  reaskMs?: number;
  now?: () => number;
}

export class RemoteFactsStore {
  private readonly docs = new Map<string, DocState>();

  constructor(
    /** Sends PROBE_REQUEST to the client. */
    private readonly ask: (params: ProbeParams) => Promise<unknown>,
    /** Called when an answer arrived for a document that is still open: diagnose it again. */
    private readonly arrived: (uri: string) => void,
    private readonly opts: RemoteFactsOptions = {},
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The facts for a document now: the answer for these paths, or none yet (and a question on its way). */
  factsFor(uri: string, target: SpecTargetInfo, wanted: WantedPath[]): RemoteFacts {
    if (target.kind === 'unknown') {
      return {
        target: target.label,
        unavailable: `"${target.id}" is not a configured target (ascendFinetune.specFiles.target, or the target last chosen for this file)`,
      };
    }
    if (wanted.length === 0) return { target: target.label, facts: {} };
    const key = JSON.stringify([target.id, wanted.map((w) => w.path)]);
    const params = { targetId: target.id, paths: wanted.map((w) => w.path) };
    let s = this.docs.get(uri);
    if (s?.key === key && s.result) {
      if (!s.inFlight && this.now() - s.at >= (this.opts.reaskMs ?? 30_000)) this.request(uri, s, key, params);
      return toFacts(target.label, wanted, s.result);
    }
    if (!s) this.docs.set(uri, (s = { key: '', at: 0, inFlight: false }));
    // One question per document at a time: edits made meanwhile are asked about when it returns.
    if (!s.inFlight) this.request(uri, s, key, params);
    return { target: target.label };
  }

  forget(uri: string): void {
    this.docs.delete(uri);
  }

  private request(uri: string, s: DocState, key: string, params: ProbeParams): void {
    s.inFlight = true;
    // Not awaited: the answer arrives later and is announced through arrived(); the first handler
    // turns any failure into a ProbeResult, so nothing can reject here.
    void this.ask(params)
      .then(
        (answer) => asProbeResult(answer, params.paths.length),
        (e: unknown): ProbeResult => ({ ok: false, message: e instanceof Error ? e.message : String(e) }),
      )
      .then((result) => {
        if (this.docs.get(uri) !== s) return; // closed meanwhile
        s.inFlight = false;
        s.key = key;
        s.result = result;
        s.at = this.now();
        this.arrived(uri);
      });
  }
}

function toFacts(target: string, wanted: WantedPath[], result: ProbeResult): RemoteFacts {
  if (!result.ok) return { target, unavailable: result.message };
  return { target, facts: Object.fromEntries(wanted.map((w, i) => [w.field, result.facts[i]])) };
}
