// Small DOM helpers and number formats of the checkpoint explorer UI: elements built with
// textContent only (run text is never HTML), vscode-button, percentages, sizes and ages.

import * as l10n from '../shared/l10n';

export type Child = Node | string | null | undefined | false;
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; title?: string; onclick?: (e: Event) => void } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.title) e.title = props.title;
  if (props.onclick) e.addEventListener('click', props.onclick);
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

export function button(
  label: string,
  onClick: () => void,
  opts: { secondary?: boolean; disabled?: boolean; title?: string } = {},
): HTMLElement {
  const b = document.createElement('vscode-button');
  b.textContent = label;
  if (opts.secondary) b.setAttribute('secondary', '');
  if (opts.disabled) b.setAttribute('disabled', '');
  if (opts.title) b.title = opts.title;
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

/** A count in the page's language's digits and grouping (`44,767,056`). */
export const count = (n: number) => new Intl.NumberFormat(l10n.language()).format(n);

export const pct = (v: number | null) => (v === null ? '' : `${(v * 100).toFixed(1)}%`);
export const fix = (v: number | null, d = 4) => (v === null ? '' : Number(v.toPrecision(d)).toString());
export const bytes = (n: number | null) => {
  if (n === null) return '?';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < u.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${u[i]}`;
};
export const age = (t: number | null) => {
  if (t === null) return '';
  const s = Math.max(0, Date.now() / 1000 - t);
  return s < 60
    ? l10n.t('{0} s', Math.round(s))
    : s < 3600
      ? l10n.t('{0} min', Math.round(s / 60))
      : s < 86400
        ? l10n.t('{0} h', Math.round(s / 3600))
        : l10n.t('{0} d', Math.round(s / 86400));
};
