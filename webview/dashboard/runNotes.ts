// The user's notes and tags on a run (meta.json, set with Edit Run Notes… / Tag Run… or the
// runner's `meta` command), under the header's title. Notes are the user's text: shown as text,
// long ones folded to a few lines with a "more" toggle; tags are small chips.
import { fill, h, setAttr, setText } from './dom';
import * as l10n from '../shared/l10n';

/** Notes past this many lines or characters are folded (CSS clamps them to FOLDED_LINES lines). */
export const FOLDED_LINES = 3;
const FOLD_CHARS = 240;

interface NotesView {
  drawn: string;
  notes: HTMLElement;
  toggle: HTMLElement;
  tags: HTMLElement;
}
const views = new WeakMap<HTMLElement, NotesView>();

export function isLongNote(notes: string): boolean {
  return notes.split('\n').length > FOLDED_LINES || notes.length > FOLD_CHARS;
}

/** Draws the notes and tags into `el`, only when they changed (the header redraws on every append). */
export function renderRunNotes(el: HTMLElement, notes: string | undefined, tags: readonly string[] | undefined): void {
  const text = (notes ?? '').trim();
  const chips = tags ?? [];
  const key = JSON.stringify([text, chips]);
  let v = views.get(el);
  if (v && v.drawn === key && el.contains(v.notes)) return;
  if (!v || !el.contains(v.notes)) {
    const built: NotesView = {
      drawn: '',
      notes: h('p', { class: 'run-notes', 'data-field': 'notes' }),
      toggle: h('button', { type: 'button', class: 'notes-toggle link' }),
      tags: h('div', { class: 'run-tags', 'data-field': 'tags', role: 'list', 'aria-label': l10n.t('tags') }),
    };
    built.toggle.addEventListener('click', () => {
      const open = built.notes.classList.toggle('folded') === false;
      setText(built.toggle, open ? l10n.t('less') : l10n.t('more'));
      setAttr(built.toggle, 'aria-expanded', String(open));
    });
    fill(el, built.tags, built.notes, built.toggle);
    views.set(el, built);
    v = built;
  }
  v.drawn = key;
  setText(v.notes, text);
  v.notes.hidden = !text;
  const long = isLongNote(text);
  // a changed note starts folded again; an unchanged one keeps what the user chose
  v.notes.classList.toggle('folded', long);
  v.toggle.hidden = !long;
  setText(v.toggle, l10n.t('more'));
  setAttr(v.toggle, 'aria-expanded', 'false');
  fill(v.tags, ...chips.map((t) => h('span', { class: 'tag-chip', role: 'listitem' }, t)));
  v.tags.hidden = chips.length === 0;
  el.hidden = !text && chips.length === 0;
}
