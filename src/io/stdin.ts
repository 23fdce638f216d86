/**
 * Reads everything a harness pipes to a hook on stdin. A terminal on stdin
 * means nobody piped anything: that reads as empty instead of waiting for a
 * person to type. Stops at `limit` bytes (a hook payload is a small JSON object).
 */
export async function readStdinText(
  stdin: NodeJS.ReadStream = process.stdin,
  limit = 1024 * 1024,
): Promise<string> {
  if (stdin.isTTY === true) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(buffer);
    size += buffer.length;
    if (size >= limit) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}
