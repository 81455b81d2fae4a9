// The dashboard's words for the codes the host sends (run states, severities, chart marks): the host sends
// stable English codes and the page says them in the display language (webview/shared/l10n.ts).
// A code this page does not know is shown as it came.
import type { RunMark } from '../../src/shared/dashboardProtocol';
import * as l10n from '../shared/l10n';

/** A run's state (its status when over, else its phase) as the header and Compare Runs say it. */
export function stateWord(state: string): string {
  switch (state) {
    case 'launching':
      return l10n.t('launching');
    case 'running':
      return l10n.t('running');
    case 'reconnecting':
      return l10n.t('reconnecting');
    case 'finished':
      return l10n.t('finished');
    case 'lost':
      return l10n.t('lost');
    case 'completed':
      return l10n.t('completed');
    case 'stopped':
      return l10n.t('stopped');
    case 'failed':
      return l10n.t('failed');
    default:
      return state;
  }
}

/** A diagnosis's or notice's severity. */
export function severityWord(severity: string): string {
  switch (severity) {
    case 'info':
      return l10n.t('info');
    case 'warning':
      return l10n.t('warning');
    case 'error':
      return l10n.t('error');
    default:
      return severity;
  }
}

/** Numbers in the display language's format (thousands separators); `digits` significant. */
export function localNumber(v: number, digits?: number): string {
  return new Intl.NumberFormat(l10n.language(), digits ? { maximumSignificantDigits: digits } : {}).format(v);
}

/** A chart mark's label, from its `args`; an older host's English `label` as it came. */
export function markLabel(m: RunMark): string {
  if (!m.args) return m.label;
  const [a = '', b = ''] = m.args;
  if (m.kind === 'unfreeze') return l10n.t('unfreeze {0}', a);
  if (m.kind === 'lr_reduced') return l10n.t('lr {0}→{1}', a, b);
  return m.label;
}
