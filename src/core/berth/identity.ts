import { lazyCrypto } from "../../lazy-crypto.js";

/**
 * Berth identity: ids, the branch and the deterministic port (spec sections 5 and 7).
 * The port formula is frozen; test/identity.test.ts pins it with fixtures.
 */

const MAX_SLUG = 40;

/**
 * Accents folded (NFKD, combining marks dropped: "café" -> "cafe"), lowercase,
 * runs of [^a-z0-9] collapsed to "-", trimmed, cut to 40 at a word boundary.
 */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length <= MAX_SLUG) return slug;
  const cut = slug.slice(0, MAX_SLUG + 1);
  const boundary = cut.lastIndexOf("-");
  const trimmed = boundary > 0 ? cut.slice(0, boundary) : slug.slice(0, MAX_SLUG);
  return trimmed.replace(/-+$/g, "");
}

export type RandomHex = (digits: number) => string;

export const cryptoHex: RandomHex = (digits) =>
  lazyCrypto()
    .randomBytes(Math.ceil(digits / 2))
    .toString("hex")
    .slice(0, digits);

const ADJECTIVES = [
  "amber",
  "brisk",
  "calm",
  "deft",
  "eager",
  "fair",
  "glad",
  "keen",
  "lucid",
  "merry",
  "quiet",
  "swift",
  "tidy",
  "vivid",
  "warm",
  "zesty",
];
const NOUNS = [
  "anchor",
  "buoy",
  "cove",
  "dock",
  "ferry",
  "harbor",
  "jetty",
  "keel",
  "mast",
  "oar",
  "pier",
  "quay",
  "rudder",
  "sail",
  "tide",
  "wharf",
];

export interface MintedId {
  id: string;
  /** The slug the name became, when it differs from the name given. */
  nameNote: string | null;
}

export function mintId(name: string | undefined, random: RandomHex = cryptoHex): MintedId {
  const suffix = random(6);
  const slug = name === undefined ? "" : slugify(name);
  if (slug === "") {
    const pick = (words: string[]) => words[Number.parseInt(random(2), 16) % words.length];
    const id = `${pick(ADJECTIVES)}-${pick(NOUNS)}-${suffix}`;
    const nameNote =
      name === undefined ? null : `"${name}" has no usable characters; named it ${id}`;
    return { id, nameNote };
  }
  const nameNote = slug === name ? null : `"${name}" became "${slug}"`;
  return { id: `${slug}-${suffix}`, nameNote };
}

/** Whether `name` has the shape `mintId` gives every id: ending in `-` and six hex digits. */
export function isBerthId(name: string): boolean {
  return /^[a-z0-9][a-z0-9-]*-[0-9a-f]{6}$/.test(name);
}

/** FNV-1a, 32-bit, over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function portFor(id: string, portBase: number, portSpan: number): number {
  return portBase + (fnv1a32(id) % portSpan);
}

/** Resource handle for databases and similar: the id with [^a-z0-9_] replaced by "_". */
export function dbNameFor(id: string): string {
  return id.replace(/[^a-z0-9_]/g, "_");
}
