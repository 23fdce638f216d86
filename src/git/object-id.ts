/**
 * What a git object id looks like: 40 hex digits in a SHA-1 repository, 64
 * in a SHA-256 one (`git init --object-format=sha256`). Records berth keeps
 * on disk are checked against it, so both kinds of repository read back.
 */
export const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isObjectId(text: string): boolean {
  return OBJECT_ID.test(text);
}
