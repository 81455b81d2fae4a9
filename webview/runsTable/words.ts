// The Runs Table's words and cell formats in the display language (webview/shared/l10n.ts). The host
// sends stable keys (column keys, run states) and English labels; the page names its fixed columns
// and the states itself, and shows numbers and durations as the dashboard does. Spec field paths
// (train.lr) and keys it does not know are shown as they came.
import { formatCell, type CellValue, type ColumnKind, type ColumnView } from '../../src/shared/runsTableProtocol';
import { formatDuration, formatNumber, formatPercent } from '../dashboard/series';
import { localNumber } from '../dashboard/words';
import * as l10n from '../shared/l10n';

export { stateWord } from '../dashboard/words';

/** A column's header: a fixed column's name translated, a spec field's dotted path as it is. */
export function columnLabel(c: Pick<ColumnView, 'key' | 'label' | 'spec'>): string {
  if (c.spec) return c.label;
  switch (c.key) {
    case 'state':
      return l10n.t('State');
    case 'name':
      return l10n.t('Name');
    case 'target':
      return l10n.t('Target');
    case 'tags':
      return l10n.t('Tags');
    case 'started_at':
      return l10n.t('Started');
    case 'duration_s':
      return l10n.t('Duration');
    case 'epochs_done':
      return l10n.t('Epochs');
    case 'best_val_acc':
      return l10n.t('Best val acc');
    case 'final_val_acc':
      return l10n.t('Final val acc');
    case 'best_val_loss':
      return l10n.t('Best val loss');
    case 'img_per_s':
      return l10n.t('Images/s');
    case 'skipped_updates':
      return l10n.t('Skipped updates');
    case 'run_id':
      return l10n.t('Run id');
    case 'trial':
      return l10n.t('Trial');
    default:
      return c.label;
  }
}

/**
 * A cell as text, by its column's kind: numbers grouped and durations worded for the display
 * language; a spec value exactly as written (a diff must not round), times as ISO-like text.
 */
export function cellText(v: CellValue | undefined, kind: ColumnKind): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return formatCell(v, kind);
  switch (kind) {
    case 'percent':
      return formatPercent(v);
    case 'duration':
      return formatDuration(v);
    case 'rate':
      return localNumber(Number(v.toFixed(v >= 100 ? 0 : 1)));
    case 'count':
      return localNumber(Math.round(v));
    case 'number':
      return formatNumber(v);
    default:
      return formatCell(v, kind);
  }
}
