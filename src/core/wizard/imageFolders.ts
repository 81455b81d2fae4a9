// Image folders in a workspace, for the Start wizard's data step and New Run Spec: a folder whose
// sub-folders (at least two, dot-folders left out: the runner's class rule) hold images is an
// ImageFolder root. Each comes with its class and image counts and the typical image size, read
// from the first bytes of a few images (PNG, JPEG, GIF, BMP headers; nothing is decoded). Bounded:
// a few levels deep, a capped number of folders and files, so a huge workspace costs little.
import { closeSync, openSync, readdirSync, readSync, type Dirent } from 'node:fs';
import * as path from 'node:path';

/** The runner's image extensions (runner/ascend_finetune/data/folder.py IMAGE_EXTENSIONS). */
export const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.bmp', '.gif', '.tif', '.tiff', '.webp']);
const SKIP = new Set(['node_modules', '.git', '.venv', 'venv', '__pycache__', 'dist', 'out', 'runs']);

export interface ImageFolder {
  path: string;
  classes: number;
  images: number;
  /** Median shorter side of the sampled images, px; undefined when none could be read. */
  typicalSize?: number;
}

export interface FindOptions {
  maxDepth?: number;
  maxFolders?: number;
  /** Images whose size is read per folder. */
  sample?: number;
}

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

const isImage = (name: string) => IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase());

/** An ImageFolder root's counts, or undefined when `dir` is not one. */
export function describeImageFolder(dir: string, sample = 24): ImageFolder | undefined {
  const classes = entries(dir).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  if (classes.length < 2) return undefined;
  let images = 0;
  const files: string[] = [];
  for (const c of classes) {
    const inClass = entries(path.join(dir, c.name)).filter((e) => e.isFile() && isImage(e.name));
    images += inClass.length;
    for (const f of inClass.slice(0, Math.ceil(sample / classes.length))) files.push(path.join(dir, c.name, f.name));
  }
  if (images === 0) return undefined;
  const sides = files
    .slice(0, sample)
    .map(imageDimensions)
    .filter((d): d is { width: number; height: number } => d !== undefined)
    .map((d) => Math.min(d.width, d.height))
    .sort((a, b) => a - b);
  const typicalSize = sides.length ? sides[Math.floor(sides.length / 2)] : undefined;
  return { path: dir, classes: classes.length, images, typicalSize };
}

/** ImageFolder roots under `root` (breadth first, nearest first); an ImageFolder's own class folders are not searched. */
export function findImageFolders(root: string, o: FindOptions = {}): ImageFolder[] {
  const maxDepth = o.maxDepth ?? 3;
  const maxFolders = o.maxFolders ?? 400;
  const found: ImageFolder[] = [];
  let queue: string[] = [root];
  let visited = 0;
  for (let depth = 0; depth <= maxDepth && queue.length > 0; depth++) {
    const next: string[] = [];
    for (const dir of queue) {
      if (++visited > maxFolders) return found;
      const f = describeImageFolder(dir, o.sample);
      if (f) {
        found.push(f);
        continue;
      }
      for (const e of entries(dir))
        if (e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name)) next.push(path.join(dir, e.name));
    }
    queue = next;
  }
  return found;
}

/** Width and height from an image file's header (PNG, JPEG, GIF, BMP), or undefined. */
export function imageDimensions(file: string): { width: number; height: number } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return headerDimensions(buf.subarray(0, n));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function headerDimensions(b: Buffer): { width: number; height: number } | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47)
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString('latin1', 0, 3) === 'GIF')
    return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 26 && b.toString('latin1', 0, 2) === 'BM')
    return { width: b.readInt32LE(18), height: Math.abs(b.readInt32LE(22)) };
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1];
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        i += 2;
        continue;
      }
      const len = b.readUInt16BE(i + 2);
      // SOF0-15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      i += 2 + len;
    }
  }
  return undefined;
}

/** How a found folder is described in a pick: "4 classes · 120 images · about 32 px". */
export function imageFolderDescription(f: ImageFolder): string {
  return [
    `${f.classes} classes`,
    `${f.images} image${f.images === 1 ? '' : 's'}`,
    f.typicalSize !== undefined ? `about ${f.typicalSize} px` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}
