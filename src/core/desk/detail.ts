import { resolve } from "node:path";
import { listCommitsNotIn } from "../../git/commits.js";
import type { CommitSubject } from "../../git/parse.js";
import { readWorktreeStatus } from "../../git/status.js";
import { readGitFile } from "../../io/admin-dirs.js";
import { readBriefRecord } from "../../io/briefs.js";
import { readReceipt, type StoredReceipt } from "../../io/receipt-file.js";
import type { DeskItem } from "./model.js";

/**
 * The desk's detail pane: the facts a row does not carry (the subjects of
 * the commits ahead, the changed files, the receipt itself). Read only for
 * the selected item, never per row: at most one `git log` and one
 * `git status`, plus three small file reads (the brief among them).
 */

export const DETAIL_COMMITS = 20;
export const DETAIL_FILES = 20;

export interface DeskDetail {
  /** Commits not on the trunk, newest first (at most DETAIL_COMMITS); null when unknown. */
  commits: CommitSubject[] | null;
  /** Changed files in the checkout (at most DETAIL_FILES); null when not read. */
  files: string[] | null;
  fileCount: number | null;
  /** The gate receipt as recorded; null when there is none (or no checkout). */
  receipt: StoredReceipt | null;
  /** The branch's brief (`berth describe`); null when none. */
  brief: string | null;
}

/**
 * `cwd` is any folder of the repository that exists (the desk's own); the
 * checkout's folder is used only for what lives there.
 */
export async function readDeskDetail(
  item: DeskItem,
  trunkTip: string | null,
  cwd: string,
  commonDir: string,
): Promise<DeskDetail> {
  const branch = item.kind === "ref" ? item.ref.branch : item.row.branch;
  const brief = branch === null ? null : (readBriefRecord(commonDir, branch)?.brief ?? null);
  if (item.kind === "ref") {
    const commits = await listCommitsNotIn(cwd, item.ref.tip, trunkTip, DETAIL_COMMITS).catch(
      () => null,
    );
    return { commits, files: null, fileCount: null, receipt: null, brief };
  }
  const { row } = item;
  const hasFolder = !row.prunable && row.readable !== false;
  const [commits, status, receipt] = await Promise.all([
    row.head === null
      ? Promise.resolve(null)
      : listCommitsNotIn(cwd, row.head, trunkTip, DETAIL_COMMITS).catch(() => null),
    hasFolder ? readWorktreeStatus(row.path).catch(() => null) : Promise.resolve(null),
    hasFolder ? readReceiptOf(row.path) : Promise.resolve(null),
  ]);
  return {
    commits,
    files: status === null ? null : status.paths.slice(0, DETAIL_FILES),
    fileCount: status === null ? null : status.changedFiles,
    receipt,
    brief,
  };
}

/** The receipt in the checkout's admin dir, found through its `.git` file (no process). */
async function readReceiptOf(checkoutPath: string): Promise<StoredReceipt | null> {
  const gitdir = await readGitFile(checkoutPath);
  return gitdir === null ? null : readReceipt(resolve(checkoutPath, gitdir));
}
