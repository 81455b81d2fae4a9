// Compare Runs' Config tab: the spec fields that differ between the compared runs, one row per
// field and one column per run (the host's diff: core/dashboard/runConfig.ts configDiff, the
// Runs Table's specDiff), with every other field one click away ("Show all fields"). Fields the
// runs share are marked as such when shown, so the differing ones stand out.
import type { ConfigDiff, RunData } from '../../src/shared/dashboardProtocol';
import * as l10n from '../shared/l10n';
import { fill, h } from './dom';

/** Whether the equal fields are shown too: kept while the page lives, across redraws. */
let showAll = false;

export function renderConfigDiff(el: HTMLElement, diff: ConfigDiff | undefined, runs: readonly RunData[]): void {
  const names = new Map(runs.map((r) => [r.header.key, r.header.name]));
  const drawn = JSON.stringify([diff ?? null, diff?.runs.map((k) => names.get(k)), showAll]);
  if (el.dataset.drawn === drawn) return;
  el.dataset.drawn = drawn;
  if (!diff || diff.rows.length === 0) {
    fill(el, h('p', { class: 'empty' }, l10n.t('The runs’ settings appear once they have started.')));
    return;
  }
  const differing = diff.rows.filter((r) => r.differs);
  const rows = showAll ? diff.rows : differing;
  const toggle = h('input', { type: 'checkbox', id: 'config-diff-all' }) as HTMLInputElement;
  toggle.checked = showAll;
  toggle.addEventListener('change', () => {
    showAll = toggle.checked;
    renderConfigDiff(el, diff, runs);
  });
  fill(
    el,
    h(
      'div',
      { class: 'config-filter' },
      toggle,
      h(
        'label',
        { for: 'config-diff-all' },
        ' ',
        l10n.t('Show all fields ({0} the same in every run)', diff.rows.length - differing.length),
      ),
    ),
    h(
      'table',
      { class: 'config-table config-diff', 'data-config': 'diff' },
      h(
        'caption',
        {},
        differing.length
          ? l10n.t('{0} spec fields differ between the runs', differing.length)
          : l10n.t('The runs have the same spec'),
      ),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, l10n.t('Setting')),
          ...diff.runs.map((k) => h('th', { scope: 'col', 'data-run': k }, names.get(k) ?? k)),
        ),
      ),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h(
            'tr',
            { 'data-path': r.path, class: r.differs ? 'differs' : 'same' },
            h('th', { scope: 'row' }, r.path),
            ...r.values.map((v) => h('td', { class: 'config-value' }, v)),
          ),
        ),
      ),
    ),
  );
}
