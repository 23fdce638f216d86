import { Box, Text, useApp, useInput, useStdout } from "ink";
import { useEffect, useRef, useState } from "react";
import type { DeskDetail } from "../../core/desk/detail.js";
import { type DeskAction, type DeskItem, reselect } from "../../core/desk/model.js";
import { shortOid } from "../../text.js";
import { detailLines, type LineTone, listLines } from "./lines.js";
import type {
  ConfirmableAction,
  DeskController,
  DeskExit,
  DeskSession,
  DeskSnapshot,
} from "./types.js";

/**
 * The desk on screen: a header, the grouped rows, one pane (detail, a
 * confirmation, a running action or its result) and a key legend, sized to
 * the terminal. It keeps only view state (selection, which pane); what a
 * row is and what an action does come from the controller.
 */

type Pane =
  | { kind: "none" }
  | { kind: "message"; text: string }
  | { kind: "planning"; text: string }
  | { kind: "confirm"; proposal: ConfirmableAction }
  | { kind: "running"; command: string; lines: string[]; notice: string | null }
  | { kind: "result"; command: string; ok: boolean; text: string };

const KEY_ACTIONS: Record<string, DeskAction> = {
  g: "gate",
  u: "update",
  a: "accept",
  p: "approve",
  w: "withdraw",
  r: "reclaim",
  x: "drop",
  s: "shell",
};

const LEGEND =
  "j/k or ↑/↓ move   enter/d detail   g gate   u update   a accept   p approve   w withdraw   r reclaim   x drop   s shell   q quit";

export interface DeskProps {
  controller: DeskController;
  session: DeskSession;
}

export function Desk({ controller, session }: DeskProps) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => terminalSize(stdout));
  const [snapshot, setSnapshot] = useState<DeskSnapshot>(() => controller.current());
  const [readError, setReadError] = useState<string | null>(null);
  const [selection, setSelection] = useState({
    key: session.selectedKey,
    index: session.selectedIndex,
  });
  const [detailOpen, setDetailOpen] = useState(session.detailOpen);
  const [pane, setPane] = useState<Pane>(() =>
    session.message === null ? { kind: "none" } : { kind: "message", text: session.message },
  );
  const [detail, setDetail] = useState<{ key: string; detail: DeskDetail } | null>(null);
  const running = useRef<AbortController | null>(null);

  useEffect(() => {
    const onResize = () => setSize(terminalSize(stdout));
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);

  useEffect(
    () =>
      controller.subscribe((update) => {
        if (update instanceof Error) {
          setReadError(update.message);
        } else {
          setReadError(null);
          setSnapshot(update);
        }
      }),
    [controller],
  );

  const { model } = snapshot;
  const index = reselect(model, selection.key, selection.index);
  const item: DeskItem | undefined = index === -1 ? undefined : model.items[index];
  // What survives a suspension (a shell) and the re-mount after it.
  session.selectedKey = item?.key ?? null;
  session.selectedIndex = index;
  session.detailOpen = detailOpen;
  session.message = null;

  // The detail pane reads the selected item only, again when its row changes.
  const detailKey = detailOpen && item !== undefined ? fingerprint(item) : null;
  const detailItem = useRef<DeskItem | undefined>(undefined);
  detailItem.current = item;
  useEffect(() => {
    const target = detailItem.current;
    if (detailKey === null || target === undefined) return;
    let live = true;
    controller.detail(target).then(
      (read) => {
        if (live) setDetail({ key: detailKey, detail: read });
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [controller, detailKey]);

  const select = (next: number) => {
    const target = model.items[next];
    if (target !== undefined) setSelection({ key: target.key, index: next });
  };

  const startAction = (action: DeskAction) => {
    const why = controller.unavailable(item, action);
    if (why !== null || item === undefined || item.kind !== "berth") {
      setPane({ kind: "message", text: why ?? "nothing is selected" });
      return;
    }
    if (action === "shell") {
      exit({ kind: "shell", path: item.row.path, id: item.row.id } satisfies DeskExit);
      return;
    }
    setPane({ kind: "planning", text: `planning ${action} for ${item.row.id} ...` });
    controller.propose(action, item).then(
      (proposal) => {
        setPane(
          proposal.kind === "refused"
            ? { kind: "result", command: proposal.command, ok: false, text: proposal.text }
            : { kind: "confirm", proposal },
        );
      },
      (error: unknown) => {
        setPane({ kind: "result", command: action, ok: false, text: String(error) });
      },
    );
  };

  const runConfirmed = (proposal: ConfirmableAction) => {
    const abort = new AbortController();
    running.current = abort;
    setPane({ kind: "running", command: proposal.command, lines: [], notice: null });
    const progress = (line: string) =>
      setPane((p) => (p.kind === "running" ? { ...p, lines: [...p.lines, line] } : p));
    void proposal.apply(abort.signal, progress).then((result) => {
      running.current = null;
      setPane({ kind: "result", command: proposal.command, ok: result.ok, text: result.text });
      void controller.refresh();
    });
  };

  useInput((input, key) => {
    const ctrlC = key.ctrl && input === "c";
    if (pane.kind === "confirm") {
      // Only `y` confirms; Enter, Esc, q, Ctrl-C and every other key answer No.
      if (input === "y" || input === "Y") {
        runConfirmed(pane.proposal);
      } else {
        void pane.proposal.decline();
        setPane({ kind: "message", text: "Not confirmed; nothing changed." });
      }
      return;
    }
    if (pane.kind === "running") {
      if (ctrlC) {
        running.current?.abort();
        setPane({ ...pane, notice: "interrupting: the running checks are being stopped ..." });
      } else if (input === "q") {
        setPane({ ...pane, notice: "an action is running; wait for it, or Ctrl-C interrupts it" });
      }
      return;
    }
    if (input === "q" || ctrlC) {
      exit({ kind: "quit" } satisfies DeskExit);
      return;
    }
    if (pane.kind === "planning") return;
    if (key.upArrow || input === "k") {
      select(Math.max(0, index - 1));
      setPane({ kind: "none" });
    } else if (key.downArrow || input === "j") {
      select(Math.min(model.items.length - 1, index + 1));
      setPane({ kind: "none" });
    } else if (key.return || input === "d") {
      setDetailOpen((open) => !open);
      setPane({ kind: "none" });
    } else if (key.escape) {
      setPane({ kind: "none" });
    } else {
      const action = KEY_ACTIONS[input];
      if (action !== undefined) startAction(action);
    }
  });

  const now = snapshot.readAt;
  const list = listLines(model, now);
  const paneText = paneLines(pane, detailOpen, item, detail, detailKey, snapshot);
  const height = Math.max(8, size.rows - 1);
  const body = height - 3; // header, separator, legend
  const { listShown, paneShown } = splitHeight(body, list.length, paneText.length);
  const selectedLine = list.findIndex((line) => line.item === index);
  const start = windowStart(selectedLine, list.length, listShown);
  const shownPane = fitPane(paneText, paneShown);
  const filler = Math.max(0, body - listShown - shownPane.length);

  const screen: ScreenLine[] = [
    { id: "header", text: headerLine(snapshot, readError), bold: true },
  ];
  for (const line of list.slice(start, start + listShown)) {
    const selected = line.item !== null && line.item === index;
    screen.push(
      line.item === null
        ? { id: `heading:${line.text}`, text: line.text, bold: true }
        : {
            id: `item:${model.items[line.item]?.key ?? line.item}`,
            text: `${selected ? ">" : " "} ${line.text}`,
            tone: line.tone,
            inverse: selected,
          },
    );
  }
  screen.push({ id: "separator", text: "─".repeat(Math.max(1, size.columns)), tone: "dim" });
  let n = 0;
  for (const line of shownPane) screen.push({ id: `pane:${n++}`, text: line === "" ? " " : line });
  for (let i = 0; i < filler; i++) screen.push({ id: `filler:${i}`, text: " " });
  screen.push({ id: "legend", text: legendFor(pane), tone: "dim" });

  return (
    <Box flexDirection="column" width={size.columns}>
      {screen.map((line) => (
        <ScreenText key={line.id} line={line} />
      ))}
    </Box>
  );
}

interface ScreenLine {
  id: string;
  text: string;
  tone?: LineTone;
  bold?: boolean;
  inverse?: boolean;
}

const TONE_COLOR: Partial<Record<LineTone, string>> = {
  ready: "green",
  contained: "cyan",
  attention: "yellow",
};

function ScreenText({ line }: { line: ScreenLine }) {
  const color = line.tone === undefined ? undefined : TONE_COLOR[line.tone];
  return (
    <Text
      wrap="truncate-end"
      bold={line.bold === true}
      inverse={line.inverse === true}
      dimColor={line.tone === "dim"}
      {...(color === undefined ? {} : { color })}
    >
      {line.text}
    </Text>
  );
}

function paneLines(
  pane: Pane,
  detailOpen: boolean,
  item: DeskItem | undefined,
  detail: { key: string; detail: DeskDetail } | null,
  detailKey: string | null,
  snapshot: DeskSnapshot,
): string[] {
  switch (pane.kind) {
    case "message":
      return [pane.text];
    case "planning":
      return [pane.text];
    case "confirm": {
      const p = pane.proposal;
      return [
        `$ ${p.command}`,
        ...(p.note === null ? [] : [`  (${p.note})`]),
        ...p.planText.trimEnd().split("\n"),
        `${p.question} [y/N]`,
      ];
    }
    case "running":
      return [
        `$ ${pane.command}`,
        "running ... (Ctrl-C interrupts it)",
        ...pane.lines,
        ...(pane.notice === null ? [] : [pane.notice]),
      ];
    case "result":
      return [
        `$ ${pane.command}`,
        ...pane.text.trimEnd().split("\n"),
        pane.ok ? "(done)" : "(not done; see above)",
      ];
    case "none":
      if (!detailOpen || item === undefined) return [];
      return detailLines(
        item,
        detail !== null && detail.key === detailKey ? detail.detail : null,
        snapshot.model,
        snapshot.readAt,
      );
  }
}

/** The list gets what it needs, but never fewer than a few rows while a pane is open. */
export function splitHeight(
  body: number,
  listNeed: number,
  paneNeed: number,
): { listShown: number; paneShown: number } {
  if (listNeed + paneNeed <= body) return { listShown: listNeed, paneShown: paneNeed };
  const listShown = Math.min(listNeed, Math.max(Math.min(listNeed, 6), body - paneNeed));
  return { listShown, paneShown: Math.max(0, body - listShown) };
}

function windowStart(selected: number, total: number, shown: number): number {
  if (total <= shown || selected < 0) return 0;
  return Math.min(Math.max(0, selected - Math.floor(shown / 2)), total - shown);
}

/** Too long for its space: keep the top and the last line (the question), say how much is hidden. */
function fitPane(lines: string[], room: number): string[] {
  if (lines.length <= room) return lines;
  if (room <= 2) return lines.slice(-room);
  const hidden = lines.length - (room - 1);
  return [
    ...lines.slice(0, room - 2),
    `... ${hidden} more line(s) (a taller terminal shows them)`,
    lines[lines.length - 1] ?? "",
  ];
}

function headerLine(snapshot: DeskSnapshot, readError: string | null): string {
  const { model } = snapshot;
  const trunk = model.trunk.name
    ? `trunk ${model.trunk.name}${model.trunk.tip ? ` at ${shortOid(model.trunk.tip)}` : " (missing)"}`
    : "trunk unknown";
  const main = model.main
    ? `main checkout ${model.main.clean === null ? "?" : model.main.clean ? "clean" : `dirty (${model.main.changed_files})`}`
    : "";
  const read = readError
    ? `could not read the fleet: ${readError} (retrying)`
    : `read ${snapshot.readAt.toTimeString().slice(0, 8)}`;
  return `berth desk  ${snapshot.mainPath}  ${trunk}  ${main}  ${read}`;
}

function legendFor(pane: Pane): string {
  switch (pane.kind) {
    case "confirm":
      return "y runs it   Enter (or any other key) answers No";
    case "running":
      return "Ctrl-C interrupts the running action";
    default:
      return LEGEND;
  }
}

/** Changes whenever the selected row does, so the detail is read again. */
function fingerprint(item: DeskItem): string {
  if (item.kind === "ref") return `${item.key} ${item.ref.tip}`;
  const { row } = item;
  return `${item.key} ${row.head} ${row.changed_files} ${row.receipt} ${row.behind}`;
}

function terminalSize(stdout: NodeJS.WriteStream): { columns: number; rows: number } {
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}
