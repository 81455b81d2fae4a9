// A dashboard tab's title from the names its runs show (their display names: a Rename Run changes
// them, and the open tab follows). No vscode here: `t` words it in the display language.
import { english, joined, type Translate } from '../l10n';

/** Longest compare title before it becomes "Compare: N runs". */
export const MAX_COMPARE_TITLE = 60;

export function dashboardTitle(names: readonly string[], t: Translate = english): string {
  if (names.length === 1) return t('Dashboard: {0}', names[0]);
  const text = t('Compare: {0}', joined(names, t));
  return text.length > MAX_COMPARE_TITLE ? t('Compare: {0} runs', names.length) : text;
}

/** Which open tabs' titles changed: [index, new title] for each tab whose runs now show other names. */
export function retitled(
  tabs: readonly { title: string; names: readonly string[] }[],
  t: Translate = english,
): [number, string][] {
  const out: [number, string][] = [];
  tabs.forEach((tab, i) => {
    const now = dashboardTitle(tab.names, t);
    if (now !== tab.title) out.push([i, now]);
  });
  return out;
}
