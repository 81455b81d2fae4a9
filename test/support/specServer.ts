// The spec language server as the extension starts it: bundled from src/server/server.ts into a
// temporary folder and run over stdio. For the unit tests that talk LSP to it and for bench/spec_server.ts.
//
//   const s = await startSpecServer('spec-server-');   // or with env: (work) => ({ ...process.env, ... })
//   s.conn.onNotification(...); s.conn.onRequest(...);  // handlers first: the server may ask at once
//   s.conn.listen(); await s.conn.sendRequest('initialize', ...);
//   s.stop();                                            // in after(): ends the server, removes the folder
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-languageserver/node';

const ROOT = path.join(__dirname, '..', '..');

export interface SpecServer {
  /** The temporary folder that holds the bundle (a test may put its own files there too). */
  work: string;
  proc: ChildProcess;
  /** Not listening yet: register handlers, then `listen()`. */
  conn: MessageConnection;
  stop(): void;
}

export async function startSpecServer(prefix: string, env?: (work: string) => NodeJS.ProcessEnv): Promise<SpecServer> {
  const work = mkdtempSync(path.join(tmpdir(), prefix));
  const outfile = path.join(work, 'server.js');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src/server/server.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['module', 'main'],
    outfile,
    logLevel: 'silent',
  });
  const proc = spawn(process.execPath, [outfile, '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: env ? env(work) : process.env,
  });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  return {
    work,
    proc,
    conn,
    stop() {
      conn.dispose();
      proc.kill();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
