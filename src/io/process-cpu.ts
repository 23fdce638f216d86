import { readFileSync } from "node:fs";

/**
 * CPU time, in milliseconds, used by this process and by the children it has
 * reaped (git, and the `sh` lanes that run git): what one fleet survey
 * really costs the machine, which the wall clock understates when the
 * statuses run in parallel. Linux reads `/proc/self/stat` (utime + stime +
 * cutime + cstime, in clock ticks of 10 ms); elsewhere only this process's
 * own time is known.
 */
export function processTreeCpuMs(): number {
  const fromProc = procSelfCpuMs();
  if (fromProc !== null) return fromProc;
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000;
}

/** Linux's USER_HZ: /proc reports times in hundredths of a second. */
const TICK_MS = 10;

function procSelfCpuMs(): number | null {
  let text: string;
  try {
    text = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return null;
  }
  return parseProcStatCpuMs(text);
}

/** utime + stime + cutime + cstime of a `/proc/<pid>/stat` line, in ms; null when it does not parse. */
export function parseProcStatCpuMs(text: string): number | null {
  // The command name (field 2) may hold spaces and parentheses: fields follow the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Fields 14-17 of the line are indexes 11-14 here (field 3, the state, is index 0).
  const ticks = [11, 12, 13, 14].map((i) => Number(fields[i]));
  if (ticks.some((t) => !Number.isFinite(t))) return null;
  return ticks.reduce((sum, t) => sum + t, 0) * TICK_MS;
}
