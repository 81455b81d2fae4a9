import { StringDecoder } from 'node:string_decoder';

/** Called for a line that is not JSON; the reader carries on with the next line. */
export type BadLineHandler = (line: string, error: Error) => void;

/**
 * Splits a byte stream into JSON lines. Chunks end anywhere: in the middle of a line or of a
 * multi-byte UTF-8 character, so both are held until the rest arrives.
 * Feed either Buffers or strings to one reader, not both (the decoder holds partial bytes).
 */
export class JsonlReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly onBadLine: BadLineHandler = () => {}) {}

  /** Returns the values of the lines this chunk completed. */
  feed(chunk: Buffer | string): unknown[] {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const values: unknown[] = [];
    let start = 0;
    for (let nl = this.pending.indexOf('\n'); nl >= 0; nl = this.pending.indexOf('\n', start)) {
      this.parse(this.pending.slice(start, nl), values);
      start = nl + 1;
    }
    this.pending = this.pending.slice(start);
    return values;
  }

  /**
   * At end of stream: a last line without a newline counts if it parses; otherwise it is a torn
   * write (a writer killed mid-line) and goes to the bad-line handler.
   */
  end(): unknown[] {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    const values: unknown[] = [];
    this.parse(rest, values);
    return values;
  }

  private parse(raw: string, into: unknown[]): void {
    const line = raw.trim(); // also drops the \r of CRLF
    if (line === '') return;
    try {
      into.push(JSON.parse(line));
    } catch (err) {
      this.onBadLine(line, err instanceof Error ? err : new Error(String(err)));
    }
  }
}
