// The Config tab: what the run was started with (the resolved spec, the weights' source and
// preprocessing, the versions), as tables of the rows the host flattened (core/dashboard/runConfig.ts).
// Redrawn only when the config changes; a filter box narrows the spec's rows.
import type { ConfigRow, RunConfig } from '../../src/shared/dashboardProtocol';
import { fill, h } from './dom';
import * as l10n from '../shared/l10n';

function table(caption: string, rows: readonly ConfigRow[], field: string): HTMLElement {
  return h(
    'table',
    { class: 'config-table', 'data-config': field },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, l10n.t('Setting')), h('th', { scope: 'col' }, l10n.t('Value'))),
    ),
    h(
      'tbody',
      {},
      ...rows.map((r) =>
        h(
          'tr',
          { 'data-path': r.path },
          h('th', { scope: 'row' }, r.path),
          h('td', { class: 'config-value' }, r.value),
        ),
      ),
    ),
  );
}

export function renderConfig(el: HTMLElement, config: RunConfig | null | undefined): void {
  const drawn = JSON.stringify(config ?? null);
  if (el.dataset.drawn === drawn) return;
  el.dataset.drawn = drawn;
  if (!config) {
    fill(
      el,
      h('p', { class: 'empty' }, l10n.t('The run’s settings appear once it has started (its run_started event).')),
    );
    return;
  }
  const filter = h('input', {
    type: 'search',
    id: 'config-filter',
    placeholder: l10n.t('Filter settings (e.g. lr, backbone)'),
    'aria-label': l10n.t('Filter the spec’s settings'),
  }) as HTMLInputElement;
  const spec = table(
    config.specSource === 'spec.json'
      ? l10n.t('Resolved spec (spec.json)')
      : l10n.t('Resolved spec (from the run_started event)'),
    config.spec,
    'spec',
  );
  filter.addEventListener('input', () => {
    const q = filter.value.trim().toLowerCase();
    spec.querySelectorAll<HTMLElement>('tbody tr').forEach((tr) => {
      tr.hidden = q !== '' && !(tr.textContent ?? '').toLowerCase().includes(q);
    });
  });
  fill(
    el,
    h('div', { class: 'config-filter' }, filter),
    spec,
    config.truncated ? h('p', { class: 'muted' }, l10n.t('{0} more settings not shown.', config.truncated)) : h('span'),
    config.weights.length
      ? table(l10n.t('Pretrained weights'), config.weights, 'weights')
      : h(
          'p',
          { 'data-config': 'weights' },
          l10n.t('No pretrained weights: the backbone started from random initialisation.'),
        ),
    config.preprocess.length ? table(l10n.t('Evaluation preprocessing'), config.preprocess, 'preprocess') : h('span'),
    table(l10n.t('Versions and device'), config.versions, 'versions'),
  );
}
