import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { naturalCompare } from "../text.js";

export interface DiskUsage {
  files: number;
  bytes: number;
  /** The biggest of the measured paths (a folder counts as a whole), largest first. */
  largest: PathUsage[];
}

export interface PathUsage {
  path: string;
  bytes: number;
}

/** How many of the largest paths a plan names. */
export const LARGEST_NAMED = 3;

export const NO_DISK_USAGE: DiskUsage = Object.freeze({ files: 0, bytes: 0, largest: [] });

/**
 * Files and bytes under `paths` (relative to `root`; a path may be a folder).
 * Symlinks count as themselves and are never followed. Unreadable entries are
 * skipped: this is a figure for a confirmation, not an audit.
 */
export async function measurePaths(root: string, paths: readonly string[]): Promise<DiskUsage> {
  const usage: DiskUsage = { files: 0, bytes: 0, largest: [] };
  const each: PathUsage[] = [];
  for (const path of paths) {
    const one = { files: 0, bytes: 0 };
    await measure(join(root, path), one);
    usage.files += one.files;
    usage.bytes += one.bytes;
    if (one.files > 0) each.push({ path: path.replace(/\/$/, ""), bytes: one.bytes });
  }
  usage.largest = largestOf(each);
  return usage;
}

/** Several checkouts' usage added up; the largest paths are named by checkout. */
export function addDiskUsage(parts: readonly { root: string; usage: DiskUsage }[]): DiskUsage {
  const total: DiskUsage = { files: 0, bytes: 0, largest: [] };
  const each: PathUsage[] = [];
  for (const { root, usage } of parts) {
    total.files += usage.files;
    total.bytes += usage.bytes;
    for (const big of usage.largest) each.push({ path: join(root, big.path), bytes: big.bytes });
  }
  total.largest = largestOf(each);
  return total;
}

function largestOf(paths: PathUsage[]): PathUsage[] {
  return paths
    .sort((a, b) => b.bytes - a.bytes || naturalCompare(a.path, b.path))
    .slice(0, LARGEST_NAMED);
}

/** "12 ignored file(s), 1.5 MiB (largest: node_modules 1.4 MiB, .cache 80 KiB)". */
export function describeIgnored(usage: DiskUsage): string {
  const base = `${usage.files} ignored file(s), ${formatBytes(usage.bytes)}`;
  if (usage.largest.length === 0) return base;
  const named = usage.largest.map((p) => `${p.path} ${formatBytes(p.bytes)}`).join(", ");
  return `${base} (largest: ${named})`;
}

async function measure(path: string, usage: { files: number; bytes: number }): Promise<void> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(path);
  } catch {
    return;
  }
  if (!stats.isDirectory()) {
    usage.files++;
    usage.bytes += stats.size;
    return;
  }
  let names: string[];
  try {
    names = await readdir(path);
  } catch {
    return;
  }
  for (const name of names) await measure(join(path, name), usage);
}

/** "1.5 MiB": sizes as people read them. */
export function formatBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
