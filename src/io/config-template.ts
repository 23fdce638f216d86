/**
 * The commented starter `berth.toml` that `berth init` writes. Every key is
 * present with its default, so the file documents itself and loads back to
 * exactly the defaults (only the trunk is filled in). Its first line points
 * editors that read TOML schemas (Taplo's `#:schema` directive) at the
 * published JSON Schema of this berth version (schemas/berth.toml.schema.json,
 * whose `$id` is that address).
 */

import { VERSION } from "../version.js";

/** Where the package's schemas/berth.toml.schema.json is served once this version is published. */
export const CONFIG_SCHEMA_URL = `https://cdn.jsdelivr.net/npm/git-berth@${VERSION}/schemas/berth.toml.schema.json`;

/** The starter `berth.toml` text for a repository whose trunk is `trunk`. */
export function renderStarterConfig(trunk: string): string {
  // JSON string escapes are valid TOML basic-string escapes.
  const trunkLine = `trunk = ${JSON.stringify(trunk)}`.padEnd(25);
  return `#:schema ${CONFIG_SCHEMA_URL}
# berth.toml: configuration for berth. Every key is shown with its default value,
# except the trunk, which \`berth init\` detected.

[repository]
${trunkLine} # remove to detect: origin/HEAD's branch, else main, else master
branch_prefix = "berth/"  # every berth branch is <prefix><id>

[worktree]
root = ""                 # "" = sibling folder "<repo>.worktrees/"; relative = from repo root
env_files = [".env", ".env.local"]  # git-ignored env files berth writes its BERTH_* keys into
inherit_env = []          # keys copied from the main checkout's env files
port_base = 41000         # deterministic port band: [port_base, port_base + port_span)
port_span = 2000          # number of ports in the band

[worktree.setup]
steps = []                # shell commands run once, after resources are created
ensure = []               # convergent commands run at setup and on \`berth worktree setup\`

# Any number of named resources, created per berth and destroyed at teardown.
# Commands get BERTH_ID, BERTH_BRANCH, BERTH_PATH, BERTH_PORT, BERTH_DB, BERTH_RESOURCE,
# BERTH_TRUNK and BERTH_REPO in their environment, and run in the berth's folder (never
# the main checkout): name its files through "$BERTH_PATH". Teardown runs the destroy
# command recorded when the resource was created.
# [worktree.resources.db]
# create = "createdb \\"$BERTH_DB\\""
# destroy = "dropdb --if-exists \\"$BERTH_DB\\""
# ensure = ""             # optional convergent command
# required = true         # false: a failed create only warns
# gc = true               # false: only an explicit teardown may destroy it

[gate]
fail_fast = true          # stop at the first failing check
timeout_s = 600           # per check, in seconds
checks = [                # run on a clean HEAD; \`after\` orders them
  # { name = "typecheck", run = "npm run typecheck" },
  # { name = "test", run = "npm test", after = ["typecheck"], timeout_s = 1200 },
]

# [gate.capacity]
# max_parallel = 0        # at most this many gates at once, fleet-wide; 0 = the cores

[acceptance]
batch = 1                 # landing-queue entries merged into one integration commit, gated once
pre_authorized = false    # true: every submitted entry may land once green, with no confirmation
queue = true              # false: a branch behind the trunk is refused, not integrated

[logbook]
enabled = true            # record verb begin/finish events

[remote]                  # across machines (nothing touches a network without a name)
name = ""                 # e.g. "origin": its trunk is the trunk; accept pushes with a lease
publish_receipts = false  # push green receipts as notes under refs/notes/berth
`;
}
