// Quick pick and input box steps with a Back button, for multi-step wizards. Each resolves to the
// choice, BACK, or undefined when the user dismissed it (Escape).
import * as vscode from 'vscode';

export const BACK = Symbol('back');
export type Back = typeof BACK;

export interface StepInfo {
  title: string;
  step: number;
  totalSteps: number;
  /** Show the Back button (not on the first step). */
  back: boolean;
}

/**
 * The part both widgets share: title, step, Back button, and a `finish` that resolves once and
 * disposes the widget with its listeners (Back resolves BACK, hiding resolves undefined).
 */
function asStep<R>(
  w: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox,
  o: StepInfo,
  resolve: (v: R | Back | undefined) => void,
) {
  const subs: vscode.Disposable[] = [];
  let done = false;
  const finish = (v: R | Back | undefined) => {
    if (done) return;
    done = true;
    resolve(v);
    for (const s of subs) s.dispose();
    w.dispose();
  };
  w.title = o.title;
  w.step = o.step;
  w.totalSteps = o.totalSteps;
  w.ignoreFocusOut = true;
  if (o.back) w.buttons = [vscode.QuickInputButtons.Back];
  subs.push(
    w.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && finish(BACK)),
    w.onDidHide(() => finish(undefined)),
  );
  return { finish, subs };
}

export interface PickOptions<T extends vscode.QuickPickItem> extends StepInfo {
  items: readonly T[] | (() => Promise<readonly T[]>);
  placeholder?: string;
  /** The item to highlight, matched by label. */
  active?: string;
  /** Called on each typed value; returns extra items to put first (e.g. "Go to <path>"). */
  extraItems?: (value: string) => T[];
  /** Items that replace the shown ones when they come (a line that said "checking…"), keeping the active one. */
  later?: Promise<readonly T[]>;
}

export function pick<T extends vscode.QuickPickItem>(o: PickOptions<T>): Promise<T | Back | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<T>();
    const { finish, subs } = asStep<T>(qp as vscode.QuickPick<vscode.QuickPickItem>, o, resolve);
    let base: readonly T[] = [];
    qp.placeholder = o.placeholder;
    qp.matchOnDescription = true;
    const setItems = () => {
      const extra = o.extraItems?.(qp.value) ?? [];
      qp.items = [...extra, ...base];
      const active = base.find((i) => i.label === o.active);
      if (active && extra.length === 0) qp.activeItems = [active];
    };
    subs.push(
      qp.onDidAccept(() => {
        const item = qp.selectedItems[0] ?? qp.activeItems[0];
        if (item) finish(item);
      }),
    );
    if (o.extraItems) subs.push(qp.onDidChangeValue(() => setItems()));
    if (typeof o.items === 'function') {
      qp.busy = true;
      qp.enabled = false;
      o.items().then(
        (items) => {
          base = items;
          qp.busy = false;
          qp.enabled = true;
          setItems();
        },
        (e: unknown) => {
          qp.busy = false;
          qp.enabled = true;
          qp.placeholder = vscode.l10n.t('Error: {0}', e instanceof Error ? e.message : String(e));
          setItems();
        },
      );
    } else {
      base = o.items;
      setItems();
    }
    if (o.later) {
      // Busy (a progress bar; the items stay pickable) until the late items come.
      qp.busy = true;
      o.later.then(
        (items) => {
          const was = qp.activeItems[0]?.label;
          base = items;
          qp.busy = false;
          setItems();
          const again = was === undefined ? undefined : base.find((i) => i.label === was);
          if (again && !o.extraItems?.(qp.value).length) qp.activeItems = [again];
        },
        () => (qp.busy = false),
      );
    }
    qp.show();
  });
}

export interface PickManyOptions<T extends vscode.QuickPickItem> extends StepInfo {
  items: readonly T[];
  placeholder?: string;
  /** Items ticked at the start. */
  selected: (item: T) => boolean;
  /** Accept with nothing ticked (an optional extra); otherwise at least one is needed. */
  allowNone?: boolean;
}

/** A multi-select step; accepting with nothing ticked is ignored unless `allowNone`. */
export function pickMany<T extends vscode.QuickPickItem>(
  o: PickManyOptions<T>,
): Promise<readonly T[] | Back | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<T>();
    const { finish, subs } = asStep<readonly T[]>(qp as vscode.QuickPick<vscode.QuickPickItem>, o, resolve);
    qp.canSelectMany = true;
    qp.placeholder = o.placeholder;
    qp.matchOnDescription = true;
    qp.items = o.items;
    qp.selectedItems = o.items.filter(o.selected);
    subs.push(
      qp.onDidAccept(() => {
        if (qp.selectedItems.length > 0 || o.allowNone) finish([...qp.selectedItems]);
      }),
    );
    qp.show();
  });
}

export interface InputOptions extends StepInfo {
  value: string;
  prompt: string;
  placeholder?: string;
  /** An error message for a bad value, or undefined. */
  validate: (value: string) => string | undefined;
}

export function input(o: InputOptions): Promise<string | Back | undefined> {
  return new Promise((resolve) => {
    const box = vscode.window.createInputBox();
    const { finish, subs } = asStep<string>(box, o, resolve);
    box.value = o.value;
    box.prompt = o.prompt;
    box.placeholder = o.placeholder;
    subs.push(
      box.onDidChangeValue((v) => (box.validationMessage = o.validate(v))),
      box.onDidAccept(() => {
        const err = o.validate(box.value);
        box.validationMessage = err;
        if (!err) finish(box.value);
      }),
    );
    box.show();
  });
}
