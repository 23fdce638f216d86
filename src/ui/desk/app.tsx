import { Box, type Key, Text, useApp, useInput, useStdout } from "ink";
import { useEffect, useRef, useState } from "react";
import type { DeskDetail } from "../../core/desk/detail.js";
import {
  type DeskAction,
  type DeskItem,
  filterDeskModel,
  reselect,
} from "../../core/desk/model.js";
import { splitKeys } from "./keys.js";
import { type LineTone, listLines } from "./lines.js";
import {
  fingerprint,
  fitPane,
  headerLine,
  legendFor,
  type Pane,
  paneLines,
  separatorLine,
  splitHeight,
  stripControls,
  terminalSize,
  windowStart,
} from "./screen.js";
import type {
  ConfirmableAction,
  DeskController,
  DeskExit,
  DeskSession,
  DeskSnapshot,
} from "./types.js";
import { wrapPane } from "./wrap.js";

/**
 * The desk on screen: a header, the grouped rows, one pane (detail, help, a
 * confirmation, a running action or its result) and a key legend that fits
 * the terminal's width, sized to the terminal. It keeps only view state
 * (selection, filter, which pane); what a row is and what an action does
 * come from the controller. Colors only when `color` is true (NO_COLOR).
 */

const KEY_ACTIONS: Record<string, DeskAction> = {
  g: "gate",
  u: "update",
  a: "accept",
  y: "approve",
  w: "withdraw",
  r: "reclaim",
  p: "park",
  x: "drop",
  s: "shell",
};

export interface DeskProps {
  controller: DeskController;
  session: DeskSession;
  /** Whether to color the screen (a terminal without NO_COLOR). */
  color: boolean;
}

export function Desk({ controller, session, color }: DeskProps) {
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
  const [filter, setFilter] = useState({ text: session.filter, editing: false });
  const running = useRef<AbortController | null>(null);
  // The view state as the keys change it: a chunk of several keys (typed fast,
  // pasted, or held) is handled key by key, each seeing what the one before did.
  const view = useRef({ selection, filter, pane, detailOpen, snapshot });
  view.current = { selection, filter, pane, detailOpen, snapshot };
  const setView = {
    selection(next: { key: string | null; index: number }) {
      view.current.selection = next;
      setSelection(next);
    },
    filter(next: { text: string; editing: boolean }) {
      view.current.filter = next;
      setFilter(next);
    },
    pane(next: Pane) {
      view.current.pane = next;
      setPane(next);
    },
    detailOpen(next: boolean) {
      view.current.detailOpen = next;
      setDetailOpen(next);
    },
  };

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

  const model = filterDeskModel(snapshot.model, filter.text);
  const index = reselect(model, selection.key, selection.index);
  const item: DeskItem | undefined = index === -1 ? undefined : model.items[index];
  // What survives a suspension (a shell) and the re-mount after it.
  session.selectedKey = item?.key ?? null;
  session.selectedIndex = index;
  session.detailOpen = detailOpen;
  session.filter = filter.text;
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

  const startAction = (action: DeskAction, item: DeskItem | undefined) => {
    const why = controller.unavailable(item, action);
    if (why !== null || item === undefined || item.kind !== "berth") {
      setView.pane({ kind: "message", text: why ?? "nothing is selected" });
      return;
    }
    if (action === "shell") {
      exit({ kind: "shell", path: item.row.path, id: item.row.id } satisfies DeskExit);
      return;
    }
    setView.pane({ kind: "planning", text: `planning ${action} for ${item.row.id} ...` });
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
    setView.pane({ kind: "running", command: proposal.command, lines: [], notice: null });
    const progress = (line: string) =>
      setPane((p) => (p.kind === "running" ? { ...p, lines: [...p.lines, line] } : p));
    void proposal.apply(abort.signal, progress).then((result) => {
      running.current = null;
      setPane({ kind: "result", command: proposal.command, ok: result.ok, text: result.text });
      void controller.refresh();
    });
  };

  const handleKey = (input: string, key: Key) => {
    const { pane, filter, detailOpen } = view.current;
    const shown = filterDeskModel(view.current.snapshot.model, filter.text);
    const at = reselect(shown, view.current.selection.key, view.current.selection.index);
    const selected: DeskItem | undefined = at === -1 ? undefined : shown.items[at];
    const select = (next: number) => {
      const target = shown.items[next];
      if (target !== undefined) setView.selection({ key: target.key, index: next });
    };
    const ctrlC = key.ctrl && input === "c";
    if (filter.editing && pane.kind !== "confirm" && pane.kind !== "running") {
      // Typing a filter: printable keys are text; Enter keeps it, Esc (or Ctrl-C) clears it.
      if (key.escape || ctrlC) setView.filter({ text: "", editing: false });
      else if (key.return) setView.filter({ ...filter, editing: false });
      else if (key.backspace || key.delete)
        setView.filter({ ...filter, text: filter.text.slice(0, -1) });
      else if (!key.ctrl && !key.meta)
        setView.filter({ ...filter, text: filter.text + stripControls(input) });
      return;
    }
    if (pane.kind === "confirm") {
      // Only `y` confirms; Enter, Esc, q, Ctrl-C and every other key answer No.
      if (input === "y" || input === "Y") {
        runConfirmed(pane.proposal);
      } else {
        void pane.proposal.decline();
        setView.pane({ kind: "message", text: "Not confirmed; nothing changed." });
      }
      return;
    }
    if (pane.kind === "running") {
      if (ctrlC) {
        running.current?.abort();
        setView.pane({ ...pane, notice: "interrupting: the running command is being stopped ..." });
      } else if (input === "q") {
        setView.pane({
          ...pane,
          notice: "an action is running; wait for it, or Ctrl-C interrupts it",
        });
      }
      return;
    }
    if (input === "q" || ctrlC) {
      exit({ kind: "quit" } satisfies DeskExit);
      return;
    }
    if (pane.kind === "planning") return;
    if (key.upArrow || input === "k") {
      select(Math.max(0, at - 1));
      setView.pane({ kind: "none" });
    } else if (key.downArrow || input === "j") {
      select(Math.min(shown.items.length - 1, at + 1));
      setView.pane({ kind: "none" });
    } else if (key.return || input === "d") {
      setView.detailOpen(!detailOpen);
      setView.pane({ kind: "none" });
    } else if (input === "/") {
      setView.filter({ ...filter, editing: true });
      setView.pane({ kind: "none" });
    } else if (input === "?") {
      setView.pane(pane.kind === "help" ? { kind: "none" } : { kind: "help" });
    } else if (key.escape) {
      if (pane.kind === "none" && filter.text !== "") setView.filter({ text: "", editing: false });
      setView.pane({ kind: "none" });
    } else {
      const action = KEY_ACTIONS[input];
      if (action !== undefined) startAction(action, selected);
    }
  };

  useInput((input, key) => {
    for (const [one, oneKey] of splitKeys(input, key)) handleKey(one, oneKey);
  });

  const now = snapshot.readAt;
  const list = listLines(model, now);
  const paneText = wrapPane(
    paneLines(pane, detailOpen, item, detail, detailKey, snapshot),
    size.columns,
  );
  const legend = legendFor(pane, filter, size.columns);
  const height = Math.max(8, size.rows - 1);
  const body = height - 2 - legend.length; // header, separator, legend
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
            text: `${selected ? ">" : " "}${line.mark} ${line.text}`,
            tone: line.tone,
            inverse: selected,
          },
    );
  }
  screen.push({ id: "separator", text: separatorLine(model, size.columns), tone: "dim" });
  let n = 0;
  for (const line of shownPane) screen.push({ id: `pane:${n++}`, text: line === "" ? " " : line });
  for (let i = 0; i < filler; i++) screen.push({ id: `filler:${i}`, text: " " });
  legend.forEach((text, i) => {
    screen.push({ id: `legend:${i}`, text, tone: "dim" });
  });

  return (
    <Box flexDirection="column" width={size.columns}>
      {screen.map((line) => (
        <ScreenText key={line.id} line={line} color={color} />
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

function ScreenText({ line, color: colored }: { line: ScreenLine; color: boolean }) {
  // NO_COLOR: no color and no faint text; bold headings and the inverse selection stay.
  const color = !colored || line.tone === undefined ? undefined : TONE_COLOR[line.tone];
  return (
    <Text
      wrap="truncate-end"
      bold={line.bold === true}
      inverse={line.inverse === true}
      dimColor={colored && line.tone === "dim"}
      {...(color === undefined ? {} : { color })}
    >
      {line.text}
    </Text>
  );
}
