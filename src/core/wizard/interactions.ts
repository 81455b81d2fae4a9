// How many times the user acts between the palette and a launched run (each quick-pick accept,
// button press or typed entry is one): the short path's budget, and the prompts it asks with the
// defaults taken. The e2e test counts the same interactions in a real VS Code.

export const SHORT_PATH_BUDGET = 5;

export type Prompt = 'palette' | 'health' | 'target' | 'data' | 'weights' | 'launch';

export interface PathSituation {
  /** Targets the user can pick from. */
  targets: number;
  /** The target's health is known to be fine (else a health screen comes first). */
  healthy: boolean;
}

/** The prompts the short path shows, in order, when every default is taken. */
export function shortPathPrompts(s: PathSituation): Prompt[] {
  const out: Prompt[] = ['palette'];
  if (s.targets > 1) out.push('target');
  if (!s.healthy) out.push('health');
  out.push('data', 'weights', 'launch');
  return out;
}

/** Counts interactions; `over` says whether a budget was passed. */
export class InteractionCounter {
  private readonly log: string[] = [];

  /** One interaction (what it was, for the failure message). */
  count(what: string): void {
    this.log.push(what);
  }

  get total(): number {
    return this.log.length;
  }

  get steps(): readonly string[] {
    return this.log;
  }

  over(budget = SHORT_PATH_BUDGET): boolean {
    return this.log.length > budget;
  }

  toString(): string {
    return `${this.log.length} interaction${this.log.length === 1 ? '' : 's'}: ${this.log.join(' → ')}`;
  }
}
