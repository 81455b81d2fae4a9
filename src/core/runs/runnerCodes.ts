// The runner's warnings and verdict reasons in the user's language. The runner writes English
// `message`s (and `fix`es) with a stable `code` and named parameters (docs/protocol.md, `warning`
// and `run_finished.health`); this table words each code it knows from those parameters through
// `t`, numbers formatted for the locale. An unknown code, or a parameter that is missing or of
// another type (an older or newer runner), gives the runner's own English text, as before.
// test/unit/runs/runnerCodes.test.ts holds the table against what the runner really sends
// (test/runner/fixtures/runner_codes.json, recorded by test/runner/test_codes.py).
// Templates use named placeholders filled after lookup, so a translation can move them. Longer
// than 450 lines on purpose: it is the one table of every code, and reads best whole.
import { english, type Translate } from '../l10n';
import { ENGLISH_WORDING, Params, attempt, fill, isObj, joined, type Sentence, type Wording } from './wording';
import { wordedRunnerError } from './runnerErrors';

export { ENGLISH_WORDING, Params, type Wording } from './wording';

const WARNINGS: Readonly<Record<string, Sentence>> = {
  ascend_unavailable: (_p, t) =>
    t(
      "device.target auto found an Ascend install but MindSpore cannot use it, so this run trains on the CPU: source CANN's set_env.sh in the target's environment set-up, or set device.target to Ascend to fail instead.",
    ),
  images_skipped: (p, t) =>
    fill(t('Skipped {count} file(s) that are not readable images.'), { count: p.num('count', 21) }),
  telemetry_unavailable: (p, t) => {
    switch (p.str('kind')) {
      case 'timeout':
        return fill(t('NPU telemetry: `npu-smi info` took longer than {seconds} s; training goes on without it.'), {
          seconds: p.num('timeout_s'),
        });
      case 'exit':
        return fill(t('NPU telemetry: `npu-smi info` exited with {code}; training goes on without it.'), {
          code: p.id('returncode'),
        });
      case 'exec':
        return fill(t('NPU telemetry: cannot run {program} ({error}); training goes on without it.'), {
          program: p.str('program'),
          error: p.str('error'),
        });
      case 'no_device':
        return fill(
          t("NPU telemetry: `npu-smi info` lists none of the run's devices ({ids}); training goes on without it."),
          {
            ids: joined(
              p.list('ids').map((x) => p.fmtNum(x, 21)),
              t,
            ),
          },
        );
      case 'format':
      case 'parser':
        return t('NPU telemetry: the output of `npu-smi info` could not be read; training goes on without it.');
      case 'host':
        return fill(t('Host telemetry: cannot read {path} ({error}); training goes on without it.'), {
          path: p.str('path'),
          error: p.str('error'),
        });
      default: // a kind this table does not know: the runner's words
        p.bad = true;
        return '';
    }
  },
  pretrained_partial: (p, t) =>
    fill(
      t(
        'Loaded {loaded} backbone tensors from {file}; {missing} missing, {unexpected} unexpected, {mismatched} of the wrong shape.',
      ),
      {
        loaded: p.num('loaded', 21),
        file: p.str('file'),
        missing: p.num('missing_count', 21),
        unexpected: p.num('unexpected_count', 21),
        mismatched: p.num('mismatched_count', 21),
      },
    ),
  weights_name_hash_mismatch: (p, t) =>
    fill(
      t(
        "{source}: the sha256 of {file} is {sha256}, which does not begin with {name_hash}, the hash its name carries (mindcv names its files by their sha256), so it may not be mindcv's file. The run goes on with it; if you trust it, pin it: {source}#sha256={sha256}",
      ),
      { source: p.str('source'), file: p.str('file'), sha256: p.str('sha256'), name_hash: p.str('name_hash') },
    ),
  amp_auto_cpu: (_p, t) => t('amp.level auto had no CPU mapping in this MindSpore; the run used O0 (fp32).'),
  sink_unavailable: (p, t) => {
    switch (p.str('cause')) {
      case 'target':
        return fill(
          t(
            'Dataset sink mode is not available on {target} (it needs a device queue, which only Ascend and GPU have); training step by step, one step event per step.',
          ),
          { target: p.str('target') },
        );
      case 'cache_features':
        return t(
          'Dataset sink mode is not used with train.cache_features: the cached features are fed from the host, step by step, one step event per step.',
        );
      case 'accumulate':
        return fill(
          t(
            'Dataset sink mode is not used with train.accumulate_steps {steps}: the micro-batches of an update are fed from the host, one step event per update; set train.accumulate_steps to 1 (with a larger data.batch_size, if it fits) to train in sinks.',
          ),
          { steps: p.num('accumulate_steps', 21) },
        );
      default:
        p.bad = true;
        return '';
    }
  },
  sink_size_reduced: (p, t) =>
    fill(
      t(
        'sink.size {size} does not divide the {steps} steps of an epoch, so each sink runs {used} steps: one step event per {used} steps; set sink.size to a divisor of {steps} to choose.',
      ),
      { size: p.fmtNum(p.obj('sink').size, 21), steps: p.num('steps_per_epoch', 21), used: p.num('size_used', 21) },
    ),
  sink_size_ignored: (_p, t) => t('sink.size was ignored: this older runner trained step by step on Ascend.'),
  npu_busy: (p, t) => {
    const procs = p.list('processes').map((x) => {
      const q = new Params(isObj(x) ? x : {}, p.language);
      const line = fill(t('{name} {pid} on {ids}'), {
        name: q.has('name') ? q.str('name') : 'pid',
        pid: q.id('pid'),
        ids: joined(
          q.list('ids').map((i) => q.fmtNum(i, 21)),
          t,
        ),
      });
      if (q.bad) p.bad = true;
      return line;
    });
    return fill(
      t(
        "Other processes already use this run's NPUs ({processes}): the run will share their compute and memory; pick free device.ids (doctor lists them) or stop those processes.",
      ),
      { processes: joined(procs.slice(0, 5), t) },
    );
  },
  npu_low_hbm: (p, t) => {
    const devices = p.list('devices').map((x) => {
      const q = new Params(isObj(x) ? x : {}, p.language);
      const line = fill(t('{id}: {free} of {total} MB free'), {
        id: q.id('id'),
        free: q.num('free_mb', 21),
        total: q.num('total_mb', 21),
      });
      if (q.bad) p.bad = true;
      return line;
    });
    return fill(
      t(
        "Little free HBM on this run's NPUs ({devices}): the run may fail with 'Malloc device memory failed'; pick other device.ids or lower data.batch_size.",
      ),
      { devices: joined(devices, t) },
    );
  },
  workers_above_cores: (p, t) =>
    fill(
      t(
        'data.workers asks for {workers} data loader threads per rank, {ranks} rank(s) on this node, but this machine has {cores} CPU cores; set data.workers to at most {most}.',
      ),
      {
        workers: p.num('workers', 21),
        ranks: p.num('ranks_per_node', 21),
        cores: p.num('cpu_count', 21),
        most: p.fmtNum(Math.max(1, Math.floor(p.value('cpu_count') / p.value('ranks_per_node'))), 21),
      },
    ),
  no_checkpoint_interval: (p, t) =>
    fill(
      t(
        'checkpoint.every_steps is {every} but the run has {total} steps: no mid-epoch checkpoint will be saved, only one at each epoch end ({per_epoch} steps apart); lower checkpoint.every_steps to save more often.',
      ),
      { every: p.num('every_steps', 21), total: p.num('total_steps', 21), per_epoch: p.num('steps_per_epoch', 21) },
    ),
  preprocess_assumed: (p, t) =>
    fill(
      t(
        "model.pretrained is a PyTorch state dict, which does not say whether it is torchvision's or timm's: using {preprocess}'s preprocessing (set model.preprocess to choose).",
      ),
      { preprocess: p.str('preprocess') },
    ),
  preprocess_not_recorded: (p, t) =>
    fill(
      t(
        "{file} is a checkpoint of this runner, but the checkpoints.json of its run folder is not beside it, so the preprocessing it was trained with is unknown and {preprocess}'s is used: copy that checkpoints.json along (the file as checkpoints/{file} below it), or set model.preprocess to the values its run reported in run_started.preprocess.",
      ),
      { file: p.str('file'), preprocess: p.str('preprocess') },
    ),
  preprocess_config_missing: (p, t) =>
    fill(
      t(
        "The weights' preprocessing config {config} is not usable ({problem}): evaluation uses the timm preset (bicubic, crop 0.95, ImageNet mean and std); set model.preprocess's mean/std/crop_pct/interpolation to the weights' own if they differ.",
      ),
      { config: p.str('config'), problem: p.str('problem') },
    ),
  preprocess_config_invalid: (p, t) =>
    fill(
      t(
        "The weights' preprocessing config {config} is not usable ({problem}): evaluation uses the timm preset (bicubic, crop 0.95, ImageNet mean and std); set model.preprocess's mean/std/crop_pct/interpolation to the weights' own if they differ.",
      ),
      { config: p.str('config'), problem: p.str('problem') },
    ),
  preprocess_input_size: (p, t) =>
    fill(
      t(
        "The weights were trained at {trained} px (their config's input_size) and data.image_size is {size}: images are cropped to {size} px; set data.image_size to {trained} to evaluate as their recipe does.",
      ),
      { trained: p.num('input_size', 21), size: p.num('image_size', 21) },
    ),
  frozen_random_backbone: (p, t) =>
    fill(
      t(
        'model.freeze is "{freeze}" but model.pretrained is null: the frozen layers keep their random initial weights, so only the head learns, on random features; set model.pretrained to a checkpoint, or model.freeze to "none" to train every layer.',
      ),
      { freeze: p.str('freeze') },
    ),
  feature_cache_rejected: (p, t) =>
    fill(t('Not reusing the feature cache at {path} ({reason}); this run computes its own features.'), {
      path: p.str('path'),
      reason: p.str('reason'),
    }),
  feature_cache_unsaved: (p, t) =>
    fill(
      t('The features were not saved at {path} ({reason}); this run trains on, and the next one computes them again.'),
      {
        path: p.str('path'),
        reason: p.str('reason'),
      },
    ),
  cann_mismatch: (p, t) =>
    fill(
      t(
        'CANN {cann} is installed but MindSpore {mindspore} supports CANN {supported}: kernels may fail to load or compile; install a matching CANN or MindSpore.',
      ),
      {
        cann: p.str('cann'),
        mindspore: p.str('mindspore'),
        supported: joined(
          p.list('supported').map((v) => (typeof v === 'string' ? v : ((p.bad = true), ''))),
          t,
        ),
      },
    ),
  data_bound: (p, t) =>
    fill(
      p.bool('cache_features')
        ? t(
            'The input pipeline bounds this run: each step waits {wait} ms of {step} ms ({share}) for its batch, so the device idles; raise data.workers (now {workers} per rank), or feed smaller images.',
          )
        : t(
            'The input pipeline bounds this run: each step waits {wait} ms of {step} ms ({share}) for its batch, so the device idles; raise data.workers (now {workers} per rank), feed smaller images, or, with a frozen backbone, set train.cache_features to true.',
          ),
      { wait: p.num('data_ms', 3), step: p.num('step_ms', 3), share: p.pct('share', 0), workers: p.num('workers', 21) },
    ),
  plateau_on_train_loss: (p, t) =>
    fill(
      t(
        "train.plateau.metric is {metric} but the run has no validation images: the plateau schedule watches the epoch's training loss instead.",
      ),
      { metric: p.str('metric') },
    ),
  ema_partial: (p, t) =>
    fill(t('{file} lacks {count} EMA tensors: those start from the resumed weights.'), {
      file: p.str('file'),
      count: p.num('count', 21),
    }),
  ema_restarted: (p, t) =>
    fill(
      t("No EMA checkpoint beside {checkpoint} ({file}): the weights' average starts again from the resumed weights."),
      { checkpoint: p.str('checkpoint'), file: p.str('file') },
    ),
  stop_failed: (p, t) =>
    fill(t('Trial {trial}: could not ask its run to stop ({error}).'), { trial: p.id('trial'), error: p.str('error') }),
  link_failed: (p, t) =>
    fill(t('Trial {trial}: could not tag its run ({error}).'), { trial: p.id('trial'), error: p.str('error') }),
};

export const WARNING_CODES: readonly string[] = Object.keys(WARNINGS);

interface ReasonWords {
  /** A few words for the status bar. */
  title: (t: Translate) => string;
  message: Sentence;
  fix: Sentence;
}

/** A run_failed reason's error worded from its code, when it has one this table knows. */
function failedError(p: Params, t: Translate): { message: string; fix?: string } | undefined {
  if (!p.has('error_code')) return undefined;
  const err = { code: p.str('error_code'), params: p.has('error_params') ? p.obj('error_params') : {} };
  return wordedRunnerError(p.has('error_fix') ? { ...err, fix: p.str('error_fix') } : err, { t, language: p.language });
}

/** The steps a verdict's loss windows cover: a sink's step event stands for several; a runner from
 * before `first_steps` counted events, which were steps without a sink. */
function windowSteps(p: Params): { first: string; last: string } {
  if (!p.has('first_steps')) return { first: p.num('window', 21), last: p.num('window', 21) };
  return { first: p.num('first_steps', 21), last: p.num('last_steps', 21) };
}

/** "epoch 7" for an eval with its epoch, "step 280" for an older runner's, which had none; the best
 *  may be the EMA weights' evaluation (train.ema), which has its own checkpoint. */
function evalAt(p: Params, which: 'best' | 'last', t: Translate): string {
  const epoch = p.has(`${which}_epoch`);
  const n = p.id(epoch ? `${which}_epoch` : `${which}_step`);
  if (which === 'best' && p.bool('best_ema'))
    return fill(epoch ? t('epoch {n} with the EMA weights') : t('step {n} with the EMA weights'), { n });
  return fill(epoch ? t('epoch {n}') : t('step {n}'), { n });
}

const REASONS: Readonly<Record<string, ReasonWords>> = {
  run_failed: {
    title: (t) => t('the run failed'),
    // The error itself worded from `error_code`/`error_params` when this table knows the code
    // (runnerErrors.ts); else the runner's English, as the run's error said it.
    message: (p, t) =>
      fill(t('The run failed ({kind}): {error}'), {
        kind: p.str('kind'),
        error: failedError(p, t)?.message ?? (p.str('error') || t('see its error')),
      }),
    fix: (p, t) => {
      const worded = failedError(p, t);
      if (worded) return worded.fix ?? t("Read the run's error, fix its cause and start the run again.");
      return p.has('error_fix')
        ? p.str('error_fix')
        : t("Read the run's error, fix its cause and start the run again.");
    },
  },
  nonfinite_steps: {
    title: (t) => t('NaN or Inf loss'),
    message: (p, t) =>
      fill(t('{count} of {steps} steps had a NaN or Inf loss; their updates were skipped.'), {
        count: p.num('count', 21),
        steps: p.num('steps', 21),
      }),
    fix: (_p, t) => t('Lower train.lr (try a tenth), and check the data and model.pretrained.'),
  },
  loss_rose: {
    title: (t) => t('the loss rose'),
    message: (p, t) =>
      fill(
        t(
          'The training loss rose over the run: median {early} over the first {first} steps, {late} over the last {last}.',
        ),
        { early: p.num('early_loss'), late: p.num('late_loss'), ...windowSteps(p) },
      ),
    fix: (_p, t) => t('Lower train.lr (try a tenth) or add train.warmup_steps; the run diverged instead of learning.'),
  },
  updates_skipped: {
    title: (t) => t('updates skipped'),
    message: (p, t) =>
      fill(
        t(
          '{skipped} of {steps} updates were skipped because the scaled gradients overflowed ({share}): the model learned from the other steps only.',
        ),
        { skipped: p.num('skipped', 21), steps: p.num('steps', 21), share: p.pct('share', 0) },
      ),
    fix: (_p, t) =>
      t(
        'Lower amp.init_scale (for example to 1024); on CPU, set amp.level to O0, which needs no loss scaling (fp16 is not faster there).',
      ),
  },
  frozen_random_backbone: {
    title: (t) => t('frozen random backbone'),
    message: (p, t) =>
      fill(
        t(
          'model.freeze is "{freeze}" but model.pretrained is null: the frozen layers kept their random initial weights, so only the head learned, on random features.',
        ),
        { freeze: p.str('freeze') },
      ),
    fix: (_p, t) => t('Set model.pretrained to a checkpoint, or model.freeze to "none" to train every layer.'),
  },
  chance_level: {
    title: (t) => t('accuracy at chance'),
    message: (p, t) =>
      fill(
        t(
          'The best validation accuracy, {best}, is within {margin} of chance ({chance} for {classes} classes on {images} images): the model did not learn to tell the classes apart.',
        ),
        {
          best: p.pct('best_val_acc'),
          margin: p.pct('margin'),
          chance: p.pct('chance'),
          classes: p.num('num_classes', 21),
          images: p.num('num_val', 21),
        },
      ),
    fix: (_p, t) =>
      t(
        "Check that each class folder holds only its own class's images, give a frozen backbone pretrained weights, or train longer or with another train.lr.",
      ),
  },
  fits_train_only: {
    title: (t) => t('fits the training images only'),
    message: (p, t) =>
      fill(
        t(
          'The training loss fell (median {early} over the first {first} steps, {late} over the last {last}) while the validation accuracy stayed at chance: the network fits its training images, but not in evaluation.',
        ),
        { early: p.num('early_loss'), late: p.num('late_loss'), ...windowSteps(p) },
      ),
    fix: (_p, t) =>
      t(
        "In evaluation, BatchNorm layers use their moving statistics, which lag behind in a short run from random weights (mindcv's MnasNet and Inception update them slowly): train longer or start from pretrained weights. Check too that data.val holds the same classes, prepared like the training images.",
      ),
  },
  val_fell: {
    title: (t) => t('accuracy fell at the end'),
    message: (p, t) =>
      fill(
        t(
          'The validation accuracy fell from its best, {best} at {at}, to {last} at the last evaluation ({end}): the run ended on worse weights than it had.',
        ),
        {
          best: p.pct('best_val_acc'),
          at: evalAt(p, 'best', t),
          last: p.pct('last_val_acc'),
          end: evalAt(p, 'last', t),
        },
      ),
    // Which checkpoint holds the best weights, and what ends a run on them: the run's own settings
    // (early stopping is not offered: it ends after the best, on weights no better, restoring nothing).
    fix: (p, t) => {
      const at = evalAt(p, 'best', t);
      const kept = p.bool('keep_best')
        ? fill(t('Use the best checkpoint, {at} (starred), not the last.'), { at })
        : fill(t('checkpoint.keep_best is off, so the checkpoint of {at} may have been deleted: turn it on.'), { at });
      const settle =
        p.str('lr_schedule') === 'constant'
          ? t(
              'To end on the best, lower train.lr (try a third) or set train.lr_schedule to "cosine", which lowers the rate towards the end.',
            )
          : t('To end on the best, lower train.lr (try a third).');
      return fill(t('{kept} {settle}'), { kept, settle });
    },
  },
  val_too_small: {
    title: (t) => t('validation set too small'),
    message: (p, t) => {
      const values = {
        images: p.num('num_val', 21),
        min: p.num('min_val', 21),
        per_class: p.num('min_per_class', 21),
      };
      return p.has('smallest_class')
        ? fill(
            t(
              'The validation set has {images} images, {smallest} in its smallest class: too few to judge the accuracy (at least {min}, and {per_class} per class).',
            ),
            { ...values, smallest: p.num('smallest_class', 21) },
          )
        : fill(
            t(
              'The validation set has {images} images: too few to judge the accuracy (at least {min}, and {per_class} per class).',
            ),
            values,
          );
    },
    // How to get more validation images depends on where they come from (the runner works it out
    // from the spec: verdict.py _val_fix); an older runner, without `val_from`, gets the general advice.
    fix: (p, t) => {
      const v = { min: p.num('min_val', 21), per_class: p.num('min_per_class', 21) };
      if (!p.has('val_from'))
        return fill(
          t(
            'Hold out more of data.train (data.val_split) or add images, or point data.val at a folder with at least {per_class} images per class and {min} in all.',
          ),
          v,
        );
      if (p.str('val_from') === 'folder')
        return fill(t('Point data.val at a folder with at least {per_class} images per class and {min} in all.'), v);
      const split = p.value('val_split');
      if (split === 0)
        return fill(
          t(
            'Set data.val_split (0.2 holds out a fifth of data.train), or point data.val at a folder with at least {per_class} images per class and {min} in all.',
          ),
          v,
        );
      return p.has('suggested_split')
        ? fill(
            t(
              'Raise data.val_split from {split} to {suggested}, or point data.val at a folder with at least {per_class} images per class and {min} in all.',
            ),
            { ...v, split: p.num('val_split'), suggested: p.num('suggested_split') },
          )
        : fill(
            t(
              'Add images: at data.val_split {split} a class needs about {images} for enough of them to be held out for validation; or point data.val at a folder with at least {per_class} images per class and {min} in all.',
            ),
            { ...v, split: p.num('val_split'), images: p.num('images_per_class', 21) },
          );
    },
  },
};

export const REASON_CODES: readonly string[] = Object.keys(REASONS);

/** A warning's sentence for a code this table knows; undefined otherwise (tests read `used`). */
export function wordWarning(
  code: string,
  details: unknown,
  w: Wording,
): { text: string; used: Set<string> } | undefined {
  const s = Object.hasOwn(WARNINGS, code) ? WARNINGS[code] : undefined;
  return s && attempt(s, details, w);
}

/** A runner warning (`{code, message, details}`) in the user's language, or its English message. */
export function warningText(
  x: { code: string; message: string; details?: unknown },
  w: Wording = ENGLISH_WORDING,
): string {
  return wordWarning(x.code, x.details, w)?.text ?? x.message;
}

/** A verdict reason's message and fix, worded from its parameters; undefined for an unknown code or a bad parameter. */
export function wordReason(
  r: Readonly<Record<string, unknown>> & { code: string },
  w: Wording,
): { message: string; fix: string; used: Set<string> } | undefined {
  const words = Object.hasOwn(REASONS, r.code) ? REASONS[r.code] : undefined;
  if (!words) return undefined;
  const message = attempt(words.message, r, w);
  const fix = attempt(words.fix, r, w);
  return message && fix
    ? { message: message.text, fix: fix.text, used: new Set([...message.used, ...fix.used]) }
    : undefined;
}

/** A verdict reason (`{code, message, fix, ...params}`) in the user's language, or the runner's English. */
export function reasonText(
  r: Readonly<Record<string, unknown>> & { code: string; message: string; fix: string },
  w: Wording = ENGLISH_WORDING,
): { message: string; fix: string } {
  const worded = wordReason(r, w);
  return worded ? { message: worded.message, fix: worded.fix } : { message: r.message, fix: r.fix };
}

/** A reason's few words for the status bar; the code with spaces for a code this table does not know. */
export function reasonTitle(code: string, t: Translate = english): string {
  return Object.hasOwn(REASONS, code) ? REASONS[code].title(t) : code.replace(/_/g, ' ');
}
