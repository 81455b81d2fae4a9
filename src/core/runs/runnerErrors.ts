// The runner's errors in the user's language. Every error object the runner prints or records has
// a stable `code` and the named `params` its English `message` (and `fix`) is built from
// (docs/protocol.md, "Errors"); this table words each code it knows through `t`, as runnerCodes.ts
// does for warnings and verdict reasons. An unknown code, or a parameter that is missing or of
// another type (an older or newer runner), gives the runner's English, as before.
// test/unit/runs/runnerErrors.test.ts holds the table against what the runner really sends
// (test/runner/fixtures/runner_codes.json, `error:<code>` entries). Longer than 450 lines on
// purpose: it is the one table of every error code.
import { type Translate } from '../l10n';
import { ENGLISH_WORDING, type Params, type Sentence, type Wording, attempt, fill, isObj, joined } from './wording';

interface ErrorWords {
  message: Sentence;
  /** How to fix it, for the codes whose error object carries a `fix`. */
  fix?: Sentence;
}

/** A list parameter of strings, joined in the locale's punctuation. */
const names = (p: Params, key: string, t: Translate): string =>
  joined(
    p.list(key).map((v) => (typeof v === 'string' ? v : ((p.bad = true), ''))),
    t,
  );

/** A `text` parameter the runner took from an exception: quoted as it is (it is the system's words). */
const CAUSE = (p: Params): string => p.str('text');

const ERRORS: Readonly<Record<string, ErrorWords>> = {
  // -- anything that ends a training run ------------------------------------------------------
  exception: {
    message: (p, t) => fill(t('The runner failed with {type}: {text}'), { type: p.str('type'), text: CAUSE(p) }),
  },
  bad_spec: {
    message: (p, t) =>
      fill(t('The run spec has {count} problem(s); each is listed with its field.'), { count: p.num('count', 21) }),
  },
  nonfinite_loss: {
    message: (p, t) =>
      fill(
        t(
          'The loss was NaN or Inf for {steps} consecutive steps (up to step {step}): lower train.lr, or check the data and the pretrained weights.',
        ),
        { steps: p.num('steps', 21), step: p.num('step', 21) },
      ),
  },
  disk_full: {
    message: (p, t) =>
      fill(
        t(
          'The disk holding the run is full ({text}). Free some space on the target, then resume the run from its last checkpoint.',
        ),
        { text: CAUSE(p) },
      ),
  },
  run_busy: {
    message: (p, t) =>
      fill(t('Another process is writing to {run_dir}: wait for it to end, or stop it first.'), {
        run_dir: p.str('run_dir'),
      }),
  },
  run_id_taken: {
    message: (p, t) => fill(t('{run_dir} already exists: a run id names one run.'), { run_dir: p.str('run_dir') }),
  },
  unsafe_file: {
    message: (p, t) => {
      const file = p.str('file');
      let what: string;
      switch (p.str('cause')) {
        case 'symlink':
          what = fill(t('{file} is a symlink'), { file });
          break;
        case 'not_regular':
          what = fill(t('{file} is not a regular file'), { file });
          break;
        case 'too_large':
          what = fill(t('{file} is larger than {limit} bytes'), { file, limit: p.num('limit', 21) });
          break;
        case 'not_folder':
          what = fill(t('{file} is not a folder'), { file });
          break;
        default:
          p.bad = true;
          return '';
      }
      return fill(
        t(
          'A file in the run directory is not safe to use ({what}: {path}). Someone else may have planted it: check who owns the run directory, remove the link or special file, and try again.',
        ),
        { what, path: p.str('path') },
      );
    },
  },
  bad_run: {
    message: (p, t) =>
      fill(
        t(
          'This run directory cannot be used: {problem}. Its status.json or events.jsonl is not a regular file or is damaged; the other runs are not affected. Delete the run, or restore its files.',
        ),
        { problem: p.str('problem') },
      ),
  },
  gone: {
    message: (p, t) => fill(t('The run directory {run_dir} no longer exists.'), { run_dir: p.str('run_dir') }),
  },
  lost: {
    message: (p, t) =>
      p.has('pid')
        ? fill(t('The training process (pid {pid}) is gone without finishing the run.'), { pid: p.id('pid') })
        : t('The training process is gone without finishing the run.'),
  },
  msrun_failed: {
    message: (p, t) =>
      fill(t('msrun exited with {code} before any rank finished: {last} (see {log}).'), {
        code: p.id('returncode'),
        last: p.has('last') ? p.str('last') : t('no output'),
        log: p.str('log'),
      }),
  },
  rank_failed: {
    message: (p, t) => {
      const values = {
        rank: p.id('rank'),
        last: p.has('last') ? p.str('last') : t('its log is empty'),
        log: p.str('log'),
      };
      if (!p.has('returncode')) return fill(t('Rank {rank} died: {last} (see {log}).'), values);
      const code = p.value('returncode');
      return code >= 0
        ? fill(t('Rank {rank} exited with code {code}: {last} (see {log}).'), { ...values, code: p.id('returncode') })
        : fill(t('Rank {rank} was killed by signal {signal}: {last} (see {log}).'), {
            ...values,
            signal: String(-code),
          });
    },
  },
  // -- the data --------------------------------------------------------------------------------
  folder_not_found: {
    message: (p, t) => fill(t('Folder not found: {folder}.'), { folder: p.str('folder') }),
    fix: (p, t) => fill(t('Point {field} at an existing ImageFolder root.'), { field: p.str('field') }),
  },
  too_few_classes: {
    message: (p, t) =>
      fill(t('Found {count} class folder(s) in {folder}; a classifier needs at least 2.'), {
        count: p.num('count', 21),
        folder: p.str('folder'),
      }),
    fix: (_p, t) => t('Put one sub-folder per class (each with images) under the data root.'),
  },
  classes_differ: {
    message: (p, t) =>
      fill(t('The validation classes differ from data.train: missing {missing}; extra {extra}.'), {
        missing: names(p, 'missing', t) || t('none'),
        extra: names(p, 'extra', t) || t('none'),
      }),
    fix: (_p, t) => t('Use the same class folder names for training and validation.'),
  },
  empty_classes: {
    message: (p, t) => fill(t('Class folder(s) with no readable images: {classes}.'), { classes: names(p, 'classes', t) }),
    fix: (_p, t) => t('Add images to those folders or remove them.'),
  },
  batch_larger_than_train_set: {
    message: (p, t) =>
      p.value('ranks') > 1
        ? fill(t('data.batch_size {batch} on each of {ranks} devices is larger than the {images} training images.'), {
            batch: p.num('batch_size', 21),
            ranks: p.num('ranks', 21),
            images: p.num('images', 21),
          })
        : fill(t('data.batch_size {batch} is larger than the {images} training images.'), {
            batch: p.num('batch_size', 21),
            images: p.num('images', 21),
          }),
    fix: (p, t) => fill(t('Set data.batch_size to at most {most}.'), { most: p.num('most', 21) }),
  },
  num_classes_mismatch: {
    message: (p, t) =>
      fill(t('model.num_classes is {num_classes} but {folder} has {found} class folders.'), {
        num_classes: p.num('num_classes', 21),
        folder: p.str('folder'),
        found: p.num('found', 21),
      }),
    fix: (p, t) => fill(t('Set model.num_classes to {found} or null.'), { found: p.num('found', 21) }),
  },
  early_stopping_without_val: {
    message: (_p, t) => t('Early stopping watches a validation metric, but this run has no validation images.'),
    fix: (_p, t) => t('Set data.val or data.val_split, or train.early_stopping.patience to 0.'),
  },
  accumulate_above_batches: {
    message: (p, t) =>
      fill(t('train.accumulate_steps is {steps} but an epoch has only {batches} batches.'), {
        steps: p.num('accumulate_steps', 21),
        batches: p.num('batches', 21),
      }),
    fix: (p, t) =>
      fill(t('Set train.accumulate_steps to at most {batches}, or lower data.batch_size.'), {
        batches: p.num('batches', 21),
      }),
  },
  cache_features_unfrozen: {
    message: (p, t) =>
      fill(
        t(
          'train.cache_features needs a frozen backbone, but model.freeze is "{freeze}": the features would change every step.',
        ),
        { freeze: p.str('freeze') },
      ),
    fix: (_p, t) => t('Set model.freeze to backbone, or train.cache_features to false.'),
  },
  cache_features_mixup: {
    message: (_p, t) =>
      t('mixup and cutmix mix images, but train.cache_features trains on features computed once.'),
    fix: (_p, t) => t('Set data.mixup and data.cutmix to 0, or train.cache_features to false.'),
  },
  cache_features_balanced: {
    message: (_p, t) => t('Balanced sampling draws other images each epoch; the feature cache trains on fixed ones.'),
    fix: (_p, t) =>
      t(
        'Set data.sampling to shuffle (and weigh the loss with train.class_weights: "auto"), or train.cache_features to false.',
      ),
  },
  cache_features_unfreeze: {
    message: (_p, t) =>
      t('Unfreezing trains backbone parts, but train.cache_features trains the head on fixed features.'),
    fix: (_p, t) => t('Remove model.unfreeze, or set train.cache_features to false.'),
  },
  cache_features_distributed: {
    message: (p, t) =>
      fill(t('train.cache_features trains on one device; this spec has {devices} device id(s) on {nodes} node(s).'), {
        devices: p.num('devices', 21),
        nodes: p.num('nodes', 21),
      }),
    fix: (_p, t) => t('Use one device id on one machine, or set train.cache_features to false.'),
  },
  unfreeze_out_of_order: {
    message: (p, t) =>
      fill(
        t(
          'model.unfreeze entry {index} (epoch {epoch}, freeze "{freeze}") must come after epoch {previous} and freeze no more than the rule before it.',
        ),
        {
          index: p.id('index'),
          epoch: p.num('epoch', 21),
          freeze: p.str('freeze'),
          previous: p.num('previous_epoch', 21),
        },
      ),
    fix: (_p, t) =>
      t('List the steps in increasing epochs, each unfreezing more (e.g. backbone, then up_to:layer3, then none).'),
  },
  class_weights_count: {
    message: (p, t) =>
      fill(t('train.class_weights has {count} weights but the data has {classes} classes.'), {
        count: p.num('count', 21),
        classes: p.num('num_classes', 21),
      }),
    fix: (p, t) =>
      fill(t('Give {classes} weights, one per class in the classes\' order (sorted folder names), or set it to "auto".'), {
        classes: p.num('num_classes', 21),
      }),
  },
  // -- pretrained weights and --resume ---------------------------------------------------------
  pretrained_not_found: {
    message: (p, t) => fill(t('Weights file not found: {path}.'), { path: p.str('path') }),
  },
  not_a_checkpoint: {
    message: (p, t) =>
      fill(t('Not a MindSpore {format} checkpoint: {path} ({error}).'), {
        format: p.str('format'),
        path: p.str('path'),
        error: p.str('error'),
      }),
  },
  checkpoint_empty: {
    message: (p, t) => fill(t('The checkpoint holds no parameters: {path}.'), { path: p.str('path') }),
  },
  torch_family_mismatch: {
    message: (p, t) =>
      fill(
        t(
          '{file} is a PyTorch {found} state dict, but model.backbone is a {family} backbone: set model.backbone to the architecture it was saved from ({fits}).',
        ),
        { file: p.str('file'), found: p.str('found'), family: p.str('family'), fits: names(p, 'fits', t) },
      ),
  },
  not_a_state_dict: {
    message: (p, t) => fill(t('{file} is not a torchvision or timm state dict.'), { file: p.str('file') }),
  },
  pretrained_variant_mismatch: {
    message: (p, t) =>
      fill(
        t(
          '{file} holds a {origin} ResNet ({variant} layout) but the backbone was built in the {built} layout: its features would differ.',
        ),
        { file: p.str('file'), origin: p.str('origin'), variant: p.str('variant'), built: p.str('built') },
      ),
  },
  pretrained_wrong_architecture: {
    message: (p, t) =>
      fill(
        t(
          'Only {fitting} of {weights} backbone conv weights in {file} fit this backbone ({mismatched} shape mismatches, {unexpected} unknown names): is it a checkpoint of another architecture? Pick the backbone it was trained with.',
        ),
        {
          fitting: p.num('fitting', 21),
          weights: p.num('weights', 21),
          file: p.str('file'),
          mismatched: p.num('mismatched', 21),
          unexpected: p.num('unexpected', 21),
        },
      ),
  },
  not_a_tensor: {
    message: (p, t) =>
      fill(t('Entry "{entry}" of the weights is a {type}, not a tensor.'), { entry: p.str('entry'), type: p.str('type') }),
  },
  no_state_dict: {
    message: (p, t) => fill(t('{file} holds no state dict (a dict of tensors).'), { file: p.str('file') }),
  },
  safetensors_missing: {
    message: (p, t) =>
      fill(t("Reading {file} needs the safetensors package, which is in the runner's requirements: pip install it."), {
        file: p.str('file'),
      }),
  },
  bad_safetensors: {
    message: (p, t) =>
      fill(t('{file} is not a readable safetensors file ({error}).'), { file: p.str('file'), error: p.str('error') }),
  },
  torch_missing: {
    message: (p, t) =>
      fill(
        t(
          '{file} is a PyTorch pickle, which the runner only reads with torch installed: convert it to .safetensors, or install torch in the runner\'s Python.',
        ),
        { file: p.str('file') },
      ),
  },
  torch_load_refused: {
    message: (p, t) =>
      fill(
        t(
          'torch.load(weights_only=True) refused {file} ({error}); a file that needs arbitrary code to load is not read: convert it to .safetensors.',
        ),
        { file: p.str('file'), error: p.str('error') },
      ),
  },
  not_torch_weights: {
    message: (p, t) =>
      fill(t('{file}: not a PyTorch weights file (.safetensors, .pth, .pt, .bin).'), { file: p.str('file') }),
  },
  torch_family_unsupported: {
    message: (p, t) =>
      fill(t('PyTorch state dicts load into {families} backbones, not {family} ones.'), {
        families: names(p, 'families', t),
        family: p.str('family'),
      }),
  },
  resume_plan_changed: {
    message: (p, t) => {
      const changed = Object.entries(p.obj('changed')).map(([k, v]) =>
        Array.isArray(v) && v.length === 2
          ? fill(t('{name} {then} then, {now} now'), { name: k, then: p.fmtNum(v[0], 21), now: p.fmtNum(v[1], 21) })
          : ((p.bad = true), ''),
      );
      return fill(
        t(
          "{file} was saved by a run with other data, batch size or epochs ({changed}): resume with the run's own spec.json, or start a new run with model.pretrained set to this file.",
        ),
        { file: p.str('file'), changed: joined(changed, t) },
      );
    },
  },
  resume_variant_mismatch: {
    message: (p, t) =>
      fill(
        t(
          "{file} was trained in the {saved} backbone layout, this run builds the {built} layout (from model.pretrained): resume with the run's own spec.json.",
        ),
        { file: p.str('file'), saved: p.str('saved'), built: p.str('built') },
      ),
  },
  resume_does_not_fit: {
    message: (p, t) =>
      fill(
        t(
          '{file} does not fit this run (missing {missing}; wrong shape {wrong}): resume from a checkpoint of the same spec.',
        ),
        {
          file: p.str('file'),
          missing: names(p, 'missing', t) || t('none'),
          wrong: names(p, 'wrong', t) || t('none'),
        },
      ),
  },
  resume_steps_mismatch: {
    message: (p, t) =>
      fill(t("{file} is at step {step}, past this run's {total} steps."), {
        file: p.str('file'),
        step: p.num('step', 21),
        total: p.num('total_steps', 21),
      }),
  },
  // -- named sources and downloads --------------------------------------------------------------
  download_offline: {
    message: (p, t) =>
      fill(
        t(
          "Cannot download {source} from {url}: {error}. On a machine without internet, fetch the file where there is a connection (or use 'Ascend: Copy Weights to Target…'), copy it to {cache} (the cache) or anywhere on this machine, and set model.pretrained to that path.",
        ),
        { source: p.str('source'), url: p.str('url'), error: p.str('error'), cache: p.str('cache') },
      ),
  },
  download_http: {
    message: (p, t) =>
      fill(
        p.value('status') === 404
          ? t('Cannot download {source}: {url} answered HTTP {status} {reason}; is the name right, and does the mirror hold it?')
          : t('Cannot download {source}: {url} answered HTTP {status} {reason}.'),
        { source: p.str('source'), url: p.str('url'), status: p.id('status'), reason: p.str('reason') },
      ),
  },
  download_broken_off: {
    message: (p, t) =>
      fill(
        t(
          'The download of {source} from {url} kept breaking off ({attempts} attempts); the partial file {part} is kept and the next run resumes it.',
        ),
        { source: p.str('source'), url: p.str('url'), attempts: p.num('attempts', 21), part: p.str('part') },
      ),
  },
  cache_size_mismatch: {
    message: (p, t) =>
      fill(
        t(
          'The cached {cache} for {source} is {size} bytes, but {expected} were downloaded: it was truncated or replaced; delete it to download it again.',
        ),
        { cache: p.str('cache'), source: p.str('source'), size: p.num('size', 21), expected: p.num('expected', 21) },
      ),
  },
  cache_hash_mismatch: {
    message: (p, t) =>
      fill(
        t('The cached {cache} for {source} has sha256 {sha256}, expected {expected}: delete it to download it again.'),
        { cache: p.str('cache'), source: p.str('source'), sha256: p.str('sha256'), expected: p.str('expected') },
      ),
  },
  download_hash_mismatch: {
    message: (p, t) =>
      fill(
        t(
          'The download of {source} from {url} has sha256 {sha256}, expected {expected}: the file was deleted; check the mirror or the pinned hash.',
        ),
        { source: p.str('source'), url: p.str('url'), sha256: p.str('sha256'), expected: p.str('expected') },
      ),
  },
  bad_pin: {
    message: (p, t) =>
      fill(t('Bad pin "{pin}" in "{value}": pin a file with #sha256=<64 hex digits> after the source.'), {
        pin: p.str('pin'),
        value: p.str('value'),
      }),
  },
  unknown_mindcv_model: {
    message: (p, t) =>
      p.has('near')
        ? fill(t('mindcv has no model "{name}" in the catalog: did you mean "{near}"?'), {
            name: p.str('name'),
            near: p.str('near'),
          })
        : fill(t('mindcv has no model "{name}" in the catalog; known: {known}.'), {
            name: p.str('name'),
            known: names(p, 'known', t),
          }),
  },
  mindcv_not_backbone: {
    message: (p, t) =>
      fill(
        t(
          'mindcv:{name} is a {family} model the runner does not offer as a backbone (docs/weights.md says why); use one of {usable}.',
        ),
        { name: p.str('name'), family: p.str('family'), usable: names(p, 'usable', t) },
      ),
  },
  not_a_hub_repo: {
    message: (p, t) =>
      fill(t('"{value}" does not name a hub repository: write hf-hub:<org>/<repo>, e.g. hf-hub:timm/resnet50.a1_in1k.'), {
        value: p.str('value'),
      }),
  },
  bad_hub_file: {
    message: (p, t) =>
      fill(t('Bad file name "{file}" in "{value}": name a file inside the repository, e.g. :model.safetensors.'), {
        file: p.str('file'),
        value: p.str('value'),
      }),
  },
  timm_arch_unmapped: {
    message: (p, t) =>
      fill(
        t(
          '{repo} is not a timm architecture the runner maps onto a backbone ("{arch}"): use a timm repository of {known}, or a local file.',
        ),
        { repo: p.str('repo'), arch: p.str('arch'), known: names(p, 'known', t) },
      ),
  },
  not_a_source: {
    message: (p, t) =>
      fill(t('"{value}" is not a named source: write mindcv:<model> or hf-hub:<org>/<repo>.'), {
        value: p.str('value'),
      }),
  },
};

export const ERROR_CODES: readonly string[] = Object.keys(ERRORS);

/** The sentences of a code this table knows, with the parameters they read; undefined otherwise. */
export function wordError(
  code: string,
  params: unknown,
  w: Wording,
): { message: string; fix?: string; used: Set<string> } | undefined {
  const words = Object.hasOwn(ERRORS, code) ? ERRORS[code] : undefined;
  if (!words) return undefined;
  const message = attempt(words.message, params, w);
  const fix = words.fix && attempt(words.fix, params, w);
  if (!message || (words.fix && !fix)) return undefined;
  return fix
    ? { message: message.text, fix: fix.text, used: new Set([...message.used, ...fix.used]) }
    : { message: message.text, used: message.used };
}

/** A runner error object as the runner may send it (older runners: no code, no params). */
export interface RunnerErrorLike {
  kind?: unknown;
  code?: unknown;
  params?: unknown;
  message?: unknown;
  fix?: unknown;
}

/**
 * A runner error's message and fix worded from its code, or undefined for a code this table does
 * not know or a parameter that does not fit. A worded message never carries the runner's English
 * fix: a code whose error has a `fix` is worded only with a fix sentence of its own.
 */
export function wordedRunnerError(
  err: RunnerErrorLike,
  w: Wording = ENGLISH_WORDING,
): { message: string; fix?: string } | undefined {
  if (typeof err.code !== 'string') return undefined;
  const worded = wordError(err.code, isObj(err.params) ? err.params : {}, w);
  if (!worded || (!worded.fix && typeof err.fix === 'string' && err.fix)) return undefined;
  return worded.fix ? { message: worded.message, fix: worded.fix } : { message: worded.message };
}

/** A runner error's message and fix in the user's language, else the runner's English (undefined without a message). */
export function runnerErrorText(
  err: RunnerErrorLike,
  w: Wording = ENGLISH_WORDING,
): { message: string; fix?: string } | undefined {
  const worded = wordedRunnerError(err, w);
  if (worded) return worded;
  if (typeof err.message !== 'string') return undefined;
  return typeof err.fix === 'string' && err.fix ? { message: err.message, fix: err.fix } : { message: err.message };
}
