/**
 * `--since` values: an ISO 8601 date or time ("2026-06-01", "2026-06-01T12:00Z")
 * or an age before now ("45s", "30m", "2h", "3d", "1w"). Pure, and tiny so the
 * argument parser can check it without loading anything else.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const AGE = /^(\d+)\s*([smhdw])$/;
const ISO_START = /^\d{4}-\d{2}-\d{2}/;
const NO_OFFSET = /[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** The instant `value` names, or null when it is neither an ISO time nor an age. */
export function parseSince(value: string, now: Date): Date | null {
  const text = value.trim();
  const age = AGE.exec(text);
  if (age) {
    const amount = Number(age[1]);
    const unit = UNIT_MS[age[2] as keyof typeof UNIT_MS];
    const since = new Date(now.getTime() - amount * unit);
    // An age reaching back past the earliest instant a Date holds names no time.
    return Number.isNaN(since.getTime()) ? null : since;
  }
  if (!ISO_START.test(text)) return null;
  // berth's times are UTC: a time of day with no offset is read as UTC too.
  const ms = Date.parse(NO_OFFSET.test(text) ? `${text}Z` : text);
  return Number.isNaN(ms) ? null : new Date(ms);
}
