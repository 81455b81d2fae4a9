// The run's verdict at the top of the dashboard: amber, with each reason and its fix, when the run
// ended with problems (a run can complete and have learned nothing); nothing while it runs or when
// it is healthy (the final card's green "Run completed." says that).
import type { DashboardHeader } from '../../src/shared/dashboardProtocol';
import { fill, h } from './dom';
import * as l10n from '../shared/l10n';
import { stateWord } from './words';

/** Whether the header's verdict is `problems` for a run that did not fail (a failure says why itself). */
export function hasProblems(header: DashboardHeader): boolean {
  return header.status !== undefined && header.status !== 'failed' && header.health?.verdict === 'problems';
}

export function renderVerdict(el: HTMLElement, header: DashboardHeader | undefined): void {
  const show = header !== undefined && hasProblems(header);
  const drawn = show ? JSON.stringify([header.status, header.health]) : 'hidden';
  if (el.dataset.drawn === drawn) return;
  el.dataset.drawn = drawn;
  el.hidden = !show;
  if (!show) return fill(el);
  const reasons = header.health?.reasons ?? [];
  fill(
    el,
    h('strong', {}, l10n.t('Run {0} with problems', stateWord(header.status ?? ''))),
    reasons.length ? l10n.t(': ') : l10n.t('.'),
    reasons.length
      ? h(
          'ul',
          { class: 'verdict-reasons' },
          ...reasons.map((r) =>
            h(
              'li',
              { 'data-code': String(r.code) },
              String(r.message),
              r.fix ? h('div', { class: 'fix' }, l10n.t('Fix: '), String(r.fix)) : null,
            ),
          ),
        )
      : h('span', {}, ' ', l10n.t('the runner reported problems without reasons.')),
  );
}
