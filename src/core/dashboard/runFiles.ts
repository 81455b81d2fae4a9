// Reading a run directory's files for the browser dashboard, when anyone may have written them:
// regular files only (opened with O_NOFOLLOW | O_NONBLOCK, then fstat: a symlink to /dev/zero, a
// FIFO or a directory is a problem to report, never something to read or wait on), a size cap per
// kind of file, and events.jsonl split into lines of capped length at the byte level (a 10 MB line
// is skipped, not parsed). Problems come back as plain sentences for the UI: English in `problem`,
// and `worded` for a reader in another language (a run's files are shared by tabs in several).
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as path from 'node:path';
import { english, type Translate } from '../l10n';

/** spec.json is the run's spec (a few KB); status.json a dozen fields. */
export const MAX_SPEC_BYTES = 1 << 20;
export const MAX_STATUS_BYTES = 64 << 10;
/** One events.jsonl line: run_started carries the spec; nothing the runner writes comes near this. */
export const MAX_EVENT_LINE_BYTES = 1 << 20;
const READ_CHUNK = 4 << 20;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A problem in the words of a given language. */
export type Worded = (t: Translate) => string;
export type Problem = { ok: false; problem: string; worded: Worded };
export type FileRead<T> = { ok: true; value: T } | Problem | { ok: 'missing' };

const problem = (worded: Worded): Problem => ({ ok: false, problem: worded(english), worded });

function openProblem(name: string, err: unknown): FileRead<never> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return { ok: 'missing' };
  if (code === 'ELOOP') return problem((t) => t('{0} is a symbolic link (not read)', name));
  return problem((t) => t('{0} cannot be opened ({1})', name, code ?? String(err)));
}

function typeProblem(name: string, st: { isDirectory(): boolean; isFIFO(): boolean }): Problem {
  const dir = st.isDirectory();
  const fifo = st.isFIFO();
  return problem((t) =>
    dir
      ? t('{0} is a directory (not read)', name)
      : fifo
        ? t('{0} is a FIFO (not read)', name)
        : t('{0} is not a regular file (not read)', name),
  );
}

const tooLarge = (name: string, maxBytes: number) =>
  problem((t) => t('{0} is larger than {1} bytes (not read)', name, maxBytes));

/** Whether a run-directory entry exists at all (of any type: a bad one still makes a run to report). */
export function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Why `file` cannot be read as a regular file (a symlink, a FIFO, a directory), or null (also when missing). */
export function regularFileProblem(file: string, t: Translate = english): string | null {
  const name = path.basename(file);
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    const r = openProblem(name, err);
    return r.ok === false ? r.worded(t) : null;
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() ? null : typeProblem(name, st).worded(t);
  } finally {
    closeSync(fd);
  }
}

/** A small regular file's bytes, at most `maxBytes`. */
export function readRegularFile(file: string, maxBytes: number): FileRead<Buffer> {
  const name = path.basename(file);
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    return openProblem(name, err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return typeProblem(name, st);
    if (st.size > maxBytes) return tooLarge(name, maxBytes);
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, n);
    if (n > maxBytes) return tooLarge(name, maxBytes);
    return { ok: true, value: buf.subarray(0, n) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return problem((t) => t('{0} cannot be read ({1})', name, code));
  } finally {
    closeSync(fd);
  }
}

/** A JSON object file (spec.json, status.json): missing, an object, or a problem. */
export function readJsonObject(file: string, maxBytes: number): FileRead<Record<string, unknown>> {
  const r = readRegularFile(file, maxBytes);
  if (r.ok !== true) return r;
  const name = path.basename(file);
  let v: unknown;
  try {
    v = JSON.parse(r.value.toString('utf8'));
  } catch {
    return problem((t) => t('{0} is not valid JSON', name));
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return problem((t) => t('{0} is not a JSON object', name));
  return { ok: true, value: v as Record<string, unknown> };
}

/**
 * Splits bytes into lines at '\n'; a line longer than `maxLine` bytes is skipped (counted, never
 * held whole). Chunks end anywhere: the partial last line waits for the next chunk.
 */
export class CappedLineSplitter {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private skipping = false;
  /** Lines seen so far (including skipped ones): the line number of the last one. */
  lineNo = 0;

  constructor(private readonly maxLine = MAX_EVENT_LINE_BYTES) {}

  feed(chunk: Buffer, onLine: (line: string, lineNo: number) => void, onLong: (lineNo: number) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      const seg = chunk.subarray(start, nl);
      start = nl + 1;
      this.lineNo++;
      if (this.skipping || this.partBytes + seg.length > this.maxLine) {
        onLong(this.lineNo);
      } else {
        const bytes = this.parts.length ? Buffer.concat([...this.parts, seg]) : seg;
        onLine(bytes.toString('utf8'), this.lineNo);
      }
      this.parts = [];
      this.partBytes = 0;
      this.skipping = false;
    }
    const tail = chunk.subarray(start);
    if (tail.length === 0 || this.skipping) return;
    if (this.partBytes + tail.length > this.maxLine) {
      this.skipping = true;
      this.parts = [];
      this.partBytes = 0;
      return;
    }
    this.parts.push(Buffer.from(tail)); // the caller reuses its buffer
    this.partBytes += tail.length;
  }
}

/**
 * Reads events.jsonl from byte `from` to its current end, handing each chunk's bytes to `onChunk`.
 * Returns the new offset, or a problem when the file is not a regular file (then nothing is read).
 */
export async function readAppended(
  file: string,
  from: number,
  onChunk: (bytes: Buffer) => void,
): Promise<{ offset: number; problem?: Problem; missing?: boolean }> {
  let fh;
  try {
    fh = await open(file, OPEN_FLAGS);
  } catch (err) {
    const r = openProblem(path.basename(file), err);
    return r.ok === 'missing' ? { offset: from, missing: true } : { offset: from, problem: r as Problem };
  }
  let offset = from;
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { offset, problem: typeProblem(path.basename(file), st) };
    const buf = Buffer.alloc(Math.min(READ_CHUNK, Math.max(st.size - from, 0) + 65536));
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
      onChunk(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return { offset };
}
