import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

export interface DiskUsage {
  files: number;
  bytes: number;
}

/**
 * Files and bytes under `paths` (relative to `root`; a path may be a folder).
 * Symlinks count as themselves and are never followed. Unreadable entries are
 * skipped: this is a figure for a confirmation, not an audit.
 */
export async function measurePaths(root: string, paths: readonly string[]): Promise<DiskUsage> {
  const usage: DiskUsage = { files: 0, bytes: 0 };
  for (const path of paths) await measure(join(root, path), usage);
  return usage;
}

async function measure(path: string, usage: DiskUsage): Promise<void> {
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
