// The idle desk's CPU (issue 21; docs/performance.md says how to read it).
//
//   npm run build && node bench/desk-idle-cpu.mjs
//   node bench/desk-idle-cpu.mjs --berths 50 --files 3000 --seconds 60 --out /tmp/desk-idle.json
//
// Builds a seeded fleet (bench/fleet.mjs: 50 berths of a ~3,000-file
// repository by default), runs `berth desk` in a real terminal (a detached
// tmux session, 80x24), lets it settle, then reads the desk process's CPU
// time from /proc/<pid>/stat (utime + stime + cutime + cstime: the desk and
// every git and sh process it reaped) at the start and the end of the
// measured window. Nothing touches the fleet meanwhile, so what it spends is
// the idle cost: the periodic re-reads and the redraws. The figure is that
// CPU time over the window's wall time, as a percentage of one core; the
// target is under 10 %. Linux only (/proc); needs tmux.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readArgs } from "./args.mjs";
import { buildFleet } from "./fleet.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BERTH = join(here, "..", "dist", "cli.cjs");
const args = readArgs(process.argv.slice(2), {
  usage:
    "Usage: node bench/desk-idle-cpu.mjs [--berths 50] [--files 3000] [--seconds 60] [--settle 10] [--out <file>]  (after npm run build; needs tmux)",
  options: ["berths", "files", "seconds", "settle", "out"],
});
const berths = args.number("berths", 50);
const files = args.number("files", 3000);
const seconds = args.number("seconds", 60);
const settleSeconds = args.number("settle", 10, { min: 0 });
const outFile = args.text("out", null);
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);

/** /proc/<pid>/stat times: [self, reaped children] in ms (clock ticks of 10 ms). */
function cpuOf(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return { self: (ticks[0] + ticks[1]) * 10, children: (ticks[2] + ticks[3]) * 10 };
}

if (!existsSync(BERTH)) throw new Error(`${BERTH} is missing: npm run build first`);
if (spawnSync("tmux", ["-V"]).status !== 0)
  throw new Error("tmux is needed (the desk wants a terminal)");
if (!existsSync("/proc/self/stat")) throw new Error("/proc is needed (Linux) to read CPU time");

log(`building a fleet of ${berths} berths over ${files} files ...`);
const fleet = await buildFleet({ worktrees: berths, files });
const socket = `berth-bench-${process.pid}`;
const tmux = (...a) =>
  spawnSync("tmux", ["-L", socket, ...a], { encoding: "utf8", env: fleet.env });
try {
  // One status for scale: what a single full re-read costs on this fleet.
  const statusStart = process.hrtime.bigint();
  execFileSync(process.execPath, [BERTH, "status", "--json"], {
    cwd: fleet.repo,
    env: fleet.env,
    maxBuffer: 1 << 26,
  });
  const statusMs = Number(process.hrtime.bigint() - statusStart) / 1e6;

  const pidFile = join(fleet.root, "desk.pid");
  const script = join(fleet.root, "desk.sh");
  writeFileSync(
    script,
    `cd '${fleet.repo}' || exit 9\necho $$ > '${pidFile}'\nexec env -u CI TERM=xterm-256color '${process.execPath}' '${BERTH}' desk\n`,
  );
  const started = tmux("new-session", "-d", "-s", "desk", "-x", "80", "-y", "24", `sh '${script}'`);
  if (started.status !== 0) throw new Error(`tmux: ${started.stderr}`);
  const deadline = Date.now() + 120_000;
  while (
    Date.now() < deadline &&
    !tmux("capture-pane", "-p", "-t", "desk").stdout.includes("kept refs")
  ) {
    await sleep(250);
  }
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  log(`desk ${pid} is up; settling ${settleSeconds} s, then measuring ${seconds} s ...`);
  await sleep(settleSeconds * 1000);

  const loadBefore = load();
  const before = cpuOf(pid);
  const wallStart = process.hrtime.bigint();
  await sleep(seconds * 1000);
  const after = cpuOf(pid);
  const wallMs = Number(process.hrtime.bigint() - wallStart) / 1e6;
  const cpuMs = after.self - before.self + (after.children - before.children);
  const result = {
    machine: {
      cpus: cpus()[0]?.model ?? "unknown",
      cores: availableParallelism(),
      load_before: loadBefore,
      load_after: load(),
    },
    fleet: fleet.summary,
    files,
    status_ms: Math.round(statusMs),
    window_s: Math.round(wallMs / 100) / 10,
    desk_cpu_ms: after.self - before.self,
    children_cpu_ms: after.children - before.children,
    cpu_percent_of_one_core: Math.round((cpuMs / wallMs) * 1000) / 10,
    target_percent: 10,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (outFile) writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  log(
    `idle desk: ${result.cpu_percent_of_one_core} % of one core over ${result.window_s} s ` +
      `(desk ${result.desk_cpu_ms} ms, git and sh ${result.children_cpu_ms} ms; one status ${result.status_ms} ms; load ${loadBefore.join(" ")})`,
  );
} finally {
  tmux("kill-server");
  rmSync(fleet.root, { recursive: true, force: true });
}
