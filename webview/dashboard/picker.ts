// The browser's runs root: pick one run to open, or several to compare.
import { fill, h } from './dom';
import * as l10n from '../shared/l10n';
import { stateWord } from './words';

/** A run as the browser server's /api/runs lists it. */
export interface PickerRun {
  key: string;
  name: string;
  runId: string;
  state: string | null;
  problem?: string | null;
}

/** The browser's runs root: a picker for one run or a comparison. */
export function renderPicker(
  picker: HTMLElement,
  runs: PickerRun[],
  current: URLSearchParams,
  navigate: (params: Record<string, string>) => void,
): void {
  if (runs.length === 0) return;
  picker.hidden = false;
  const select = h('select', { id: 'run-picker', 'aria-label': l10n.t('Run') });
  const selected = current.get('run');
  for (const r of runs) {
    // A run whose files are bad is still listed, marked, with its problem as the tooltip.
    const bad = typeof r.problem === 'string' && r.problem !== '';
    const label = `${bad ? '⚠ ' : ''}${r.name} · ${r.runId}${r.state ? ` · ${stateWord(r.state)}` : ''}${bad ? ` · ${l10n.t('bad run')}` : ''}`;
    const o = h('option', { value: r.key, title: bad ? String(r.problem) : undefined }, label);
    if (r.key === selected) o.selected = true;
    select.appendChild(o);
  }
  const open = h('vscode-button', {}, l10n.t('Open'));
  open.addEventListener('click', () => navigate({ run: select.value }));
  const compareBoxes = runs.map((r) => h('vscode-checkbox', { value: r.key, label: `${r.name} (${r.runId})` }));
  const compare = h('vscode-button', { secondary: true }, l10n.t('Compare selected'));
  compare.addEventListener('click', () => {
    const keys = compareBoxes
      .filter((b) => (b as unknown as { checked: boolean }).checked)
      .map((b) => b.getAttribute('value')!);
    if (keys.length >= 2) navigate({ compare: keys.join(',') });
  });
  fill(
    picker,
    h('label', { for: 'run-picker' }, l10n.t('Run'), ' '),
    select,
    open,
    runs.length > 1
      ? h('details', { class: 'compare-pick' }, h('summary', {}, l10n.t('Compare runs…')), ...compareBoxes, compare)
      : null,
  );
}
