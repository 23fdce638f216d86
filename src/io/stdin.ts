/** The most a hook reads from stdin: 1 MiB. */
const STDIN_LIMIT = 1024 * 1024;

/**
 * Reads everything a harness pipes to a hook on stdin. A terminal on stdin
 * means nobody piped anything: that reads as empty instead of waiting for a
 * person to type. Stops past `limit` bytes (a hook payload is a small JSON
 * object): null then, so a caller can say the input is too large rather than
 * judge its first part.
 */
export async function readStdinText(
  stdin: NodeJS.ReadStream = process.stdin,
  limit = STDIN_LIMIT,
): Promise<string | null> {
  if (stdin.isTTY === true) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(buffer);
    size += buffer.length;
    if (size > limit) return null;
  }
  return Buffer.concat(chunks).toString("utf8");
}
