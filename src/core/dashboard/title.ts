// A dashboard tab's title from the names its runs show (their display names: a Rename Run changes
// them, and the open tab follows). No vscode here.

/** Longest compare title before it becomes "Compare: N runs". */
export const MAX_COMPARE_TITLE = 60;

export function dashboardTitle(names: readonly string[]): string {
  if (names.length === 1) return `Dashboard: ${names[0]}`;
  const text = `Compare: ${names.join(', ')}`;
  return text.length > MAX_COMPARE_TITLE ? `Compare: ${names.length} runs` : text;
}

/** Which open tabs' titles changed: [index, new title] for each tab whose runs now show other names. */
export function retitled(tabs: readonly { title: string; names: readonly string[] }[]): [number, string][] {
  const out: [number, string][] = [];
  tabs.forEach((t, i) => {
    const now = dashboardTitle(t.names);
    if (now !== t.title) out.push([i, now]);
  });
  return out;
}
