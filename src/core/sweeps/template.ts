// A new sweep spec's text: the base run spec, a learning rate log range and freeze choices
// (docs/sweeps.md), for the user to edit before starting it.
import * as path from 'node:path';

export const SWEEP_FILE_GLOB = '**/*.ascend-sweep.{yaml,yml,json}';

/** `dir/resnet.ascend.yaml` -> `dir/resnet.ascend-sweep.yaml`. */
export function sweepFileBeside(specPath: string): string {
  const stem = path
    .basename(specPath)
    .replace(/\.ascend\.(ya?ml|json)$/, '')
    .replace(/\.(ya?ml|json)$/, '');
  return path.join(path.dirname(specPath), `${stem}.ascend-sweep.yaml`);
}

/** YAML 1.2 double-quoted scalar (JSON's string syntax is one). */
const quote = (s: string) => JSON.stringify(s);

export function sweepTemplate(base: string, name: string): string {
  return `# A hyperparameter sweep (docs/sweeps.md): Optuna tries values of the fields under space,
# each trial a normal run of the base spec on a free device; Start it with "Ascend: Start Sweep…".
name: ${quote(name)}
base: ${quote(base)}
space:
  train.lr: {low: 1.0e-4, high: 1.0e-1, log: true}
  model.freeze: {choices: [backbone, "up_to:layer3", none]}
objective: {metric: best_val_acc}
trials: 8
sampler: tpe
pruner: {kind: median, startup_trials: 2, warmup_epochs: 1}
devices: all free
`;
}
