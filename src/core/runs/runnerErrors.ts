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
          'A file in the run directory is not safe to use ({what}: {path}). Someone else may have planted it: check who owns the run directory, remove the link, folder or special file, and try again.',
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
    message: (p, t) =>
      fill(t('Class folder(s) with no readable images: {classes}.'), { classes: names(p, 'classes', t) }),
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
    message: (_p, t) => t('mixup and cutmix mix images, but train.cache_features trains on features computed once.'),
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
      fill(
        t('Give {classes} weights, one per class in the classes\' order (sorted folder names), or set it to "auto".'),
        {
          classes: p.num('num_classes', 21),
        },
      ),
  },
  // -- pretrained weights and --resume ---------------------------------------------------------
  pretrained_not_found: {
    message: (p, t) => fill(t('Weights file not found: {path}.'), { path: p.str('path') }),
  },
  pretrained_changed: {
    message: (p, t) =>
      fill(
        t(
          '{path} changed while the run loaded it (another file was put in its place, or it was rewritten or removed): the weights loaded may not be the ones checked. Start the run again once nothing writes it.',
        ),
        { path: p.str('path') },
      ),
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
      fill(t('Entry "{entry}" of the weights is a {type}, not a tensor.'), {
        entry: p.str('entry'),
        type: p.str('type'),
      }),
  },
  no_state_dict: {
    message: (p, t) => fill(t('{file} holds no state dict (a dict of tensors).'), { file: p.str('file') }),
  },
  bad_safetensors: {
    message: (p, t) =>
      fill(t('{file} is not a readable safetensors file ({error}).'), { file: p.str('file'), error: p.str('error') }),
  },
  torch_missing: {
    message: (p, t) =>
      fill(
        t(
          "{file} is a PyTorch pickle, which the runner only reads with torch installed: convert it to .safetensors, or install torch in the runner's Python.",
        ),
        { file: p.str('file') },
      ),
  },
  torch_load_refused: {
    message: (p, t) =>
      fill(
        t(
          'torch.load(weights_only=True) refused {file} ({error}): the runner does not unpickle objects other than tensors, such as the arguments a training checkpoint keeps beside its weights. Only if you trust the file (weights_only=False runs any code it holds), load it with weights_only=False where torch is installed and save its tensors as .safetensors.',
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
    // mindcv's preprocessing is known without the file (`preprocess`); a hub repository's is its config.json.
    // A mindcv model trained at another size than 224 also names data.image_size (`image_size`).
    message: (p, t) => {
      const mindcv = p.has('preprocess');
      const sized = mindcv && p.has('image_size');
      return fill(
        sized
          ? t(
              "Cannot download {source} from {url}: {error}. On a machine without internet, fetch the file where there is a connection (or use 'Ascend: Copy Weights to Target…') and copy it to {cache}: in the cache the run finds it by its name, with its preprocessing. A copy elsewhere is read as a plain file: set model.pretrained to its path, model.preprocess to {preprocess}, and data.image_size to {image_size}, the size the weights were trained at.",
            )
          : mindcv
            ? t(
                "Cannot download {source} from {url}: {error}. On a machine without internet, fetch the file where there is a connection (or use 'Ascend: Copy Weights to Target…') and copy it to {cache}: in the cache the run finds it by its name, with its preprocessing. A copy elsewhere is read as a plain file: set model.pretrained to its path and model.preprocess to {preprocess}.",
              )
            : t(
                "Cannot download {source} from {url}: {error}. On a machine without internet, fetch the file where there is a connection (or use 'Ascend: Copy Weights to Target…') and copy it to {cache}, with the repository's config.json beside it: in the cache the run finds it by its name, with that config's preprocessing. A copy elsewhere is read as a plain file: set model.pretrained to its path and model.preprocess's mean, std, crop_pct and interpolation to that config.json's.",
              ),
        {
          source: p.str('source'),
          url: p.str('url'),
          error: p.str('error'),
          cache: p.str('cache'),
          ...(mindcv ? { preprocess: p.str('preprocess') } : {}),
          ...(sized ? { image_size: p.id('image_size') } : {}),
        },
      );
    },
  },
  download_http: {
    message: (p, t) =>
      fill(
        p.value('status') === 404
          ? t(
              'Cannot download {source}: {url} answered HTTP {status} {reason}; is the name right, and does the mirror hold it?',
            )
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
  download_interrupted: {
    message: (p, t) =>
      fill(
        t(
          'The download of {source} from {url} was interrupted and could not reconnect ({error}); the partial file {part} is kept and the next run resumes it.',
        ),
        { source: p.str('source'), url: p.str('url'), error: p.str('error'), part: p.str('part') },
      ),
  },
  download_locked: {
    message: (p, t) =>
      fill(
        t(
          "Another process holds the download of {source} (the lock {lock}) and its partial file has not changed for {waited} s: it may be stuck, such as a 'Copy Weights to Target' copy whose ssh connection dropped. Find it with `fuser -v {lock}` (or `lsof {lock}`), stop it, and try again. The lock ends with the process holding it, so removing the file does not help; if no process here holds it, one on another machine sharing this cache does.",
        ),
        { source: p.str('source'), lock: p.str('lock'), waited: p.num('waited_s', 21) },
      ),
  },
  download_bad_range: {
    message: (p, t) =>
      fill(
        t(
          "{url} answered the request for the rest of {source} with a malformed Content-Range '{range}'; the partial file {part} was deleted and the next run downloads the file whole.",
        ),
        { url: p.str('url'), source: p.str('source'), range: p.str('content_range'), part: p.str('part') },
      ),
  },
  cache_unsafe: {
    message: (p, t) => {
      const words: Record<string, string> = {
        symlink: t('{path} in the weights cache is a symlink'),
        not_folder: t('{path} in the weights cache is not a folder'),
        not_regular: t('{path} in the weights cache is not a regular file'),
      };
      const what = words[p.str('cause')];
      if (what === undefined) {
        p.bad = true;
        return '';
      }
      return fill(
        t(
          '{what}: refusing to follow it (a symlinked folder is followed only when you or root own the link). Someone else may have planted it: check who owns it, remove it, and try again. To keep the cache elsewhere, such as on a bigger disk, set ASCEND_FINETUNE_CACHE to a folder there.',
        ),
        { what: fill(what, { path: p.str('path') }) },
      );
    },
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
      fill(
        t('"{value}" does not name a hub repository: write hf-hub:<org>/<repo>, e.g. hf-hub:timm/resnet50.a1_in1k.'),
        {
          value: p.str('value'),
        },
      ),
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
  // -- checkpoint tools: export, eval, predict, inspect, compare, ls, prune ----------------------
  checkpoint_not_found: {
    message: (p, t) => fill(t('Checkpoint not found: {path}.'), { path: p.str('path') }),
  },
  bad_checkpoint: {
    message: (p, t) =>
      fill(t('{file} is not a usable checkpoint: {reason}.'), { file: p.str('file'), reason: p.str('reason') }),
  },
  bad_variant: {
    message: (p, t) =>
      fill(t('{file}: the backbone layout it records cannot be read ({error}).'), {
        file: p.str('file'),
        error: p.str('error'),
      }),
  },
  checkpoint_does_not_fit: {
    message: (p, t) =>
      fill(
        t(
          "{file} does not fit this run's model ({backbone}, {classes} classes): {missing} of its {total} parameters missing, {wrong} of the wrong shape. Is it a checkpoint of another architecture, or of another run?",
        ),
        {
          file: p.str('file'),
          backbone: p.str('backbone'),
          classes: p.num('classes', 21),
          missing: p.num('missing_count', 21),
          total: p.num('params_count', 21),
          wrong: p.num('wrong_count', 21),
        },
      ),
  },
  tensor_not_numeric: {
    message: (p, t) =>
      fill(t('{tensor} in {file} is not numeric ({dtype}).'), {
        tensor: p.str('tensor'),
        file: p.str('file'),
        dtype: p.str('dtype'),
      }),
  },
  device_unavailable: {
    message: (p, t) =>
      fill(t('Cannot use {device} here ({error}): pass --device CPU.'), {
        device: p.str('device'),
        error: p.str('error'),
      }),
  },
  no_classes_json: {
    message: (p, t) =>
      fill(t('{run_dir} has no classes.json: the run never started training, so it has no class names.'), {
        run_dir: p.str('run_dir'),
      }),
  },
  no_classes_no_head: {
    message: (p, t) =>
      fill(t('{run_dir} has no classes.json and the checkpoint has no head: cannot tell the number of classes.'), {
        run_dir: p.str('run_dir'),
      }),
  },
  no_run_spec: {
    message: (p, t) =>
      fill(
        t(
          "No run at {run_dir} (spec.json missing or unreadable): pass --run the run's directory, the folder that holds spec.json and checkpoints.json.",
        ),
        { run_dir: p.str('run_dir') },
      ),
  },
  no_manifest: {
    message: (p, t) =>
      fill(t("No checkpoints.json in {run_dir}: pass the run's directory."), { run_dir: p.str('run_dir') }),
  },
  unknown_backbone: {
    message: (p, t) =>
      fill(t('{run_dir}/spec.json has an unknown model.backbone "{backbone}".'), {
        run_dir: p.str('run_dir'),
        backbone: p.str('backbone'),
      }),
  },
  unknown_freeze: {
    message: (p, t) =>
      fill(t('{run_dir}/spec.json has an unknown model.freeze "{freeze}".'), {
        run_dir: p.str('run_dir'),
        freeze: p.str('freeze'),
      }),
  },
  checkpoint_outside_run: {
    message: (p, t) =>
      fill(t("{file} is not in a run's checkpoints/ folder: pass --run RUN_DIR (the run it was trained in)."), {
        file: p.str('file'),
      }),
  },
  eval_classes_differ: {
    message: (p, t) =>
      fill(
        t(
          "The class folders in {folder} differ from the run's {classes} classes: missing {missing}, extra {extra}. Evaluate on a folder with the run's class folders.",
        ),
        {
          folder: p.str('folder'),
          classes: p.num('classes', 21),
          missing: names(p, 'missing', t) || t('none'),
          extra: names(p, 'extra', t) || t('none'),
        },
      ),
  },
  no_validation_set: {
    message: (_p, t) => t('The run has no validation set (no data.val and no data.val_split): pass --data DIR.'),
  },
  no_images_to_evaluate: {
    message: (p, t) => fill(t('No readable images to evaluate in {folder}.'), { folder: p.str('folder') }),
  },
  bad_batch_size: {
    message: (p, t) => fill(t('--batch-size must be at least 1 (got {size}).'), { size: p.id('batch_size') }),
  },
  bad_export_suffix: {
    message: (p, t) =>
      fill(t('--out must end with {suffix} for --format {format} (got {out}).'), {
        suffix: p.str('suffix'),
        format: p.str('format'),
        out: p.str('out'),
      }),
  },
  export_tmpdir: {
    message: (p, t) =>
      fill(t('No temporary folder with a name MindSpore accepts (tried {tmpdir}): set TMPDIR to a plain path.'), {
        tmpdir: p.str('tmpdir'),
      }),
  },
  export_failed: {
    message: (p, t) =>
      fill(t('MindSpore could not export {file} to {format}: {error}'), {
        file: p.str('file'),
        format: p.str('format').toUpperCase(),
        error: p.str('error'),
      }),
  },
  export_no_file: {
    message: (p, t) =>
      fill(t('MindSpore wrote no {format} file for {file}.'), {
        format: p.str('format').toUpperCase(),
        file: p.str('file'),
      }),
  },
  outside_run: {
    message: (p, t) =>
      fill(
        t(
          "{file} is outside the run directory {run_dir} (after resolving '..' and symlinks): only the run's own checkpoints can be deleted.",
        ),
        { file: p.str('file'), run_dir: p.str('run_dir') },
      ),
  },
  not_in_manifest: {
    message: (p, t) =>
      fill(
        t(
          '{file} is not a checkpoint listed in {run_dir}/checkpoints.json: pass a `file` value from the manifest, e.g. checkpoints/<name>.ckpt.',
        ),
        { file: p.str('file'), run_dir: p.str('run_dir') },
      ),
  },
  best_protected: {
    message: (p, t) =>
      fill(t("{file} is the run's best checkpoint: pass --allow-best to delete it."), { file: p.str('file') }),
  },
  run_live: {
    message: (p, t) =>
      fill(
        t(
          '{file} is the newest checkpoint of a run that is still training: wait for the run to end, or stop it first.',
        ),
        {
          file: p.str('file'),
        },
      ),
  },
  // predict's answer for one file
  file_unreadable: {
    message: (p, t) => fill(t('The file cannot be read ({error}).'), { error: p.str('error') }),
  },
  file_not_regular: {
    message: (_p, t) => t('Not a regular file.'),
  },
  file_too_large: {
    message: (p, t) =>
      fill(t('{size} bytes, above the {limit} MiB limit.'), { size: p.num('size', 21), limit: p.num('limit_mib', 21) }),
  },
  not_an_image: {
    message: (p, t) => fill(t('Not a readable image ({error}).'), { error: p.str('error') }),
  },
  decode_failed: {
    message: (p, t) => fill(t('The image could not be decoded ({error}).'), { error: p.str('error') }),
  },
  nonfinite_logits: {
    message: (_p, t) => t("The network's logits are NaN or Inf."),
  },
  // -- runs, sweeps, meta and the other commands -----------------------------------------------
  cancelled: {
    message: (p, t) =>
      fill(t('The preview was cancelled by {signal} during {phase}.'), {
        signal: p.str('signal'),
        phase: p.str('phase'),
      }),
  },
  not_a_run: {
    message: (p, t) => fill(t('No run at {run_dir} (status.json missing).'), { run_dir: p.str('run_dir') }),
  },
  not_running: {
    message: (p, t) =>
      fill(t("The run is {state}; only a running run takes '{action}'."), {
        state: p.str('state'),
        action: p.str('action'),
      }),
  },
  bad_run_id: {
    message: (p, t) =>
      fill(t("--run-id \"{run_id}\": use letters, digits, '.', '_' and '-' (a run id from `launch`)."), {
        run_id: p.str('run_id'),
      }),
  },
  node_rank_out_of_range: {
    message: (p, t) =>
      fill(t("--node-rank {rank} is outside the spec's {nodes} node(s) (device.nodes)."), {
        rank: p.id('node_rank'),
        nodes: p.num('nodes', 21),
      }),
  },
  bad_master_address: {
    message: (p, t) => fill(t('The master address cannot be used: {text}'), { text: CAUSE(p) }),
  },
  negative_preview_budget: {
    message: (_p, t) => t('--samples and --max-bytes must be 0 or more.'),
  },
  bad_max_bytes: {
    message: (_p, t) => t('--max-bytes must be 1 or more.'),
  },
  too_many_files: {
    message: (p, t) =>
      fill(t('At most {most} files per call (got {count}): ask in parts.'), {
        most: p.num('most', 21),
        count: p.num('count', 21),
      }),
  },
  no_such_folder: {
    message: (p, t) =>
      fill(t('No such folder: {folder}: pass the data folder the files are in.'), { folder: p.str('folder') }),
  },
  missing_dependency: {
    message: (p, t) =>
      fill(
        t(
          'Sweeps need Optuna, and {module} is not installed in {python}: install optuna==5.0.0 there (runner/requirements.txt).',
        ),
        {
          module: p.str('module'),
          python: p.str('python'),
        },
      ),
  },
  not_a_sweep: {
    message: (p, t) => fill(t('Not a sweep folder this runner can read: {text}'), { text: CAUSE(p) }),
  },
  not_a_sweep_folder: {
    message: (p, t) =>
      fill(t('{folder} is not a sweep folder (no sweep.json): pass a sweep spec or a sweep folder.'), {
        folder: p.str('folder'),
      }),
  },
  sweep_needs_root: {
    message: (_p, t) => t("--root is required with a sweep spec: the runs root the trials' runs go under."),
  },
  bad_sweep_id: {
    message: (p, t) =>
      fill(t("--sweep-id \"{sweep_id}\": use up to 60 letters, digits, '.', '_' and '-'."), {
        sweep_id: p.str('sweep_id'),
      }),
  },
  sweep_spec_differs: {
    message: (p, t) =>
      fill(t('{folder} holds another spec: resume it with `sweep {folder}`, or pick a new --sweep-id.'), {
        folder: p.str('folder'),
      }),
  },
  sweep_folder_taken: {
    message: (p, t) =>
      fill(t('{folder} already exists and is not a sweep folder: pick another --sweep-id.'), {
        folder: p.str('folder'),
      }),
  },
  sweep_busy: {
    message: (p, t) =>
      fill(t('A scheduler is already running {folder}: see sweep-status, or sweep-stop it.'), {
        folder: p.str('folder'),
      }),
  },
  scheduler_running: {
    message: (p, t) => fill(t('A scheduler is already running {folder}.'), { folder: p.str('folder') }),
  },
  sweep_not_running: {
    message: (p, t) => fill(t('The sweep is {state}; only a running sweep can be stopped.'), { state: p.str('state') }),
  },
  name_too_long: {
    message: (p, t) =>
      fill(t('The name has {length} characters; at most {most}.'), {
        length: p.num('length', 21),
        most: p.num('most', 21),
      }),
  },
  name_bad_char: {
    message: (p, t) => fill(t('The name contains the control or invisible character {char}.'), { char: p.str('char') }),
  },
  notes_too_long: {
    message: (p, t) =>
      fill(t('The notes are {size} bytes (UTF-8); at most {most}.'), {
        size: p.num('size', 21),
        most: p.num('most', 21),
      }),
  },
  notes_bad_char: {
    message: (p, t) =>
      fill(t('The notes contain the control character {char} (line breaks and tabs are fine).'), {
        char: p.str('char'),
      }),
  },
  tag_empty: {
    message: (_p, t) => t('A tag is empty.'),
  },
  tag_too_long: {
    message: (p, t) =>
      fill(t('The tag "{tag}…" has {length} characters; at most {most}.'), {
        tag: p.str('tag'),
        length: p.num('length', 21),
        most: p.num('most', 21),
      }),
  },
  tag_bad_char: {
    message: (p, t) => fill(t('A tag contains the control or invisible character {char}.'), { char: p.str('char') }),
  },
  too_many_tags: {
    message: (p, t) =>
      fill(t('The run would have {count} tags; at most {most}.'), {
        count: p.num('count', 21),
        most: p.num('most', 21),
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
