// The host's gate for messages from a dashboard UI. A webview or a browser tab is untrusted input:
// only the four known message types pass, with finite numbers inside their bounds and strings of a
// bounded size; the result is a fresh object holding only the known fields, so nothing extra the
// sender attached (a __proto__, a path) reaches the host's code.
import type { UiMessage } from './dashboardProtocol';

/** Plot widths in CSS pixels: wide enough for any monitor, small enough to bound a snapshot. */
export const MIN_WIDTH = 16;
export const MAX_WIDTH = 8192;
/** A step bound: the runner's steps are integers from 1; larger is nonsense. */
export const MAX_STEP = 1e12;
export const MAX_NAME_CHARS = 128;
/** CSV of a million-step run is ~60 MB; a PNG data URL of a 4k chart a few MB. */
export const MAX_EXPORT_CHARS = 64 * 1024 * 1024;

export type Validated = { ok: true; message: UiMessage } | { ok: false; error: string };

const fail = (error: string): Validated => ({ ok: false, error });

export function validateUiMessage(raw: unknown): Validated {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('a message must be an object');
  const m = raw as Record<string, unknown>;
  const type = m.type;
  switch (type) {
    case 'ready':
    case 'resize': {
      const w = width(m.width);
      if (typeof w === 'string') return fail(`${type}.width: ${w}`);
      return { ok: true, message: { type, width: w } };
    }
    case 'zoom': {
      const w = width(m.width);
      if (typeof w === 'string') return fail(`zoom.width: ${w}`);
      const min = stepBound(m.min);
      if (typeof min === 'string') return fail(`zoom.min: ${min}`);
      const max = stepBound(m.max);
      if (typeof max === 'string') return fail(`zoom.max: ${max}`);
      if (min !== null && max !== null && min > max)
        return fail('zoom: min must not be above max (send nulls to reset)');
      return { ok: true, message: { type, min, max, width: w } };
    }
    case 'export': {
      const format = m.format;
      if (format !== 'csv' && format !== 'png') return fail('export.format: must be "csv" or "png"');
      const name = fileName(m.suggestedName, format);
      if (name.startsWith('!')) return fail(`export.suggestedName: ${name.slice(1)}`);
      if (typeof m.data !== 'string') return fail('export.data: must be a string');
      if (m.data.length > MAX_EXPORT_CHARS) return fail(`export.data: larger than ${MAX_EXPORT_CHARS} characters`);
      if (format === 'png' && !/^data:image\/png;base64,[A-Za-z0-9+/]*={0,2}$/.test(m.data))
        return fail('export.data: a PNG must be a data:image/png;base64 URL');
      return { ok: true, message: { type, format, suggestedName: name, data: m.data } };
    }
    default:
      return fail(
        typeof type === 'string' ? `unknown message type "${type.slice(0, 40)}"` : 'message.type must be a string',
      );
  }
}

function width(v: unknown): number | string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number';
  if (v < MIN_WIDTH || v > MAX_WIDTH) return `must be between ${MIN_WIDTH} and ${MAX_WIDTH}`;
  return Math.round(v);
}

function stepBound(v: unknown): number | null | string {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number or null';
  if (Math.abs(v) > MAX_STEP) return `must be within ±${MAX_STEP}`;
  return v;
}

/**
 * A plain file name (no folders, no control characters, no leading dot) ending in the format's
 * extension, which is added when missing; '!' + reason when it cannot be used.
 */
function fileName(v: unknown, format: 'csv' | 'png'): string {
  if (typeof v !== 'string' || v.trim() === '') return '!must be a non-empty string';
  if (v.length > MAX_NAME_CHARS) return `!longer than ${MAX_NAME_CHARS} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f/\\:*?"<>|]/.test(v)) return '!must be a plain file name (no folders or special characters)';
  if (v.startsWith('.') || v.includes('..')) return '!must not start with a dot or contain ".."';
  return v.toLowerCase().endsWith(`.${format}`) ? v : `${v}.${format}`;
}
