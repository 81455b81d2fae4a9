// Training events (model.unfreeze's `unfreeze`, the plateau schedule's `lr_reduced`) as labelled
// vertical markers over a chart: DOM elements in uPlot's overlay, placed at their step on each
// draw, so they follow zoom and resize and a screen reader (and a test) can read their labels.
import type uPlot from 'uplot';
import type { RunMark } from '../../src/shared/dashboardProtocol';
import * as l10n from '../shared/l10n';
import { markLabel } from './words';

/** About the width of a label: closer marks get their labels stacked. */
const LABEL_PX = 110;

/** Places `marks` over the chart; those outside the x range shown are hidden. */
export function drawEventMarks(u: uPlot, marks: readonly RunMark[]): void {
  const layer = layerOf(u);
  while (layer.children.length > marks.length) layer.lastElementChild!.remove();
  const { min, max } = u.scales.x;
  const placed: number[] = [];
  marks.forEach((m, i) => {
    let el = layer.children[i] as HTMLElement | undefined;
    if (!el) {
      el = document.createElement('div');
      el.appendChild(document.createElement('span'));
      layer.appendChild(el);
    }
    el.className = `event-mark event-${m.kind}`;
    el.dataset.step = String(m.step);
    el.dataset.kind = m.kind;
    const label = markLabel(m);
    el.title = l10n.t('step {0}: {1}', m.step, label);
    el.firstElementChild!.textContent = label;
    const inside = min !== undefined && max !== undefined && m.step >= min && m.step <= max;
    el.hidden = !inside;
    // The overlay has the plot area's size in CSS pixels: valToPos without canvas scaling.
    if (!inside) return;
    const left = u.valToPos(m.step, 'x');
    el.style.left = `${left}px`;
    // Near the right edge the label goes to the left of its line, so it is not cut off.
    el.classList.toggle('flip', left > u.over.clientWidth - LABEL_PX);
    // Labels of nearby marks (the same step, or a few pixels apart) are stacked, not overlaid.
    while (placed.length && placed[0] < left - LABEL_PX) placed.shift();
    (el.firstElementChild as HTMLElement).style.top = `${2 + 13 * (placed.length % 4)}px`;
    placed.push(left);
  });
}

function layerOf(u: uPlot): HTMLElement {
  let layer = u.over.querySelector<HTMLElement>(':scope > .event-marks');
  if (!layer) {
    layer = document.createElement('div');
    layer.className = 'event-marks';
    u.over.appendChild(layer);
  }
  return layer;
}
