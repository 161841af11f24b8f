/**
 * Fakes of systemd's programs for the `threadline service` tests (this machine has no systemd
 * as PID 1, so the real `systemctl --user` cannot run; docs/deploy.md says so): `systemctl` and
 * `journalctl` shell scripts in a temp bin folder put first on PATH. Each call appends its
 * argv to a log ({@link FakeSystemd.calls}); `systemctl` keeps the unit's state
 * (active/inactive) in a file, answers `show` with it, and with `down` answers every call as
 * systemctl does without a reachable manager; `journalctl -f` prints two lines and waits until killed.
 * A fake `launchctl` keeps whether the agent is loaded (bootstrap/bootout) and answers `print`.
 *
 * @module
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temp folder with fake `systemctl` and `journalctl`. */
export interface FakeSystemd {
  /** The folder to put first on PATH. */
  bin: string;
  /** The environment additions: PATH and the fakes' state and log files. */
  env: Record<string, string>;
  /** Every call so far, one string per call (`systemctl --user start threadline.service`). */
  calls(): string[];
  /** Forgets the calls so far. */
  clearCalls(): void;
  remove(): void;
}

const RECORD = `{ printf '%s' "$(basename "$0")"; for a in "$@"; do printf ' %s' "$a"; done; printf '\\n'; } >> "$FAKE_SYSTEMD_LOG"`;

const SYSTEMCTL = `#!/bin/sh
${RECORD}
if [ -n "$FAKE_SYSTEMD_DOWN" ]; then echo "$FAKE_SYSTEMD_DOWN" >&2; exit 1; fi
[ "$1" = "--user" ] && shift
state=$(cat "$FAKE_SYSTEMD_STATE" 2>/dev/null || echo inactive)
case "$1" in
  show-environment) echo "HOME=$HOME"; exit 0 ;;
  start|restart) echo active > "$FAKE_SYSTEMD_STATE" ;;
  stop) echo inactive > "$FAKE_SYSTEMD_STATE" ;;
  disable) [ "$2" = "--now" ] && echo inactive > "$FAKE_SYSTEMD_STATE" ;;
  show)
    if [ "$state" = active ]; then
      printf 'ActiveState=active\\nSubState=running\\nMainPID=4242\\nStateChangeTimestamp=Sat 2026-11-28 10:00:00 UTC\\n'
    else
      printf 'ActiveState=inactive\\nSubState=dead\\nMainPID=0\\nStateChangeTimestamp=\\n'
    fi ;;
esac
exit 0
`;

const JOURNALCTL = `#!/bin/sh
${RECORD}
printf 'gateway log line one\\ngateway log line two\\n'
# -f: follow until killed, as journalctl does.
for a in "$@"; do [ "$a" = "-f" ] && exec sleep 600; done
exit 0
`;

const LAUNCHCTL = `#!/bin/sh
${RECORD}
loaded="$FAKE_SYSTEMD_STATE.launchd"
case "$1" in
  print)
    case "$2" in
      */dev.threadline.gateway) [ -f "$loaded" ] || { echo "Could not find service" >&2; exit 113; }; printf 'state = running\\n\\tpid = 777\\n' ;;
      *) echo "domain = $2" ;;
    esac ;;
  bootstrap) touch "$loaded" ;;
  bootout) rm -f "$loaded" ;;
esac
exit 0
`;

/** Creates the fakes; `down`: answer like systemctl without a manager (the message it prints). */
export function fakeSystemd(options: { down?: string } = {}): FakeSystemd {
  const root = mkdtempSync(join(tmpdir(), "threadline-fake-systemd-"));
  const bin = join(root, "bin");
  mkdirSync(bin);
  for (const [name, text] of [
    ["systemctl", SYSTEMCTL],
    ["journalctl", JOURNALCTL],
    ["launchctl", LAUNCHCTL],
  ] as const) {
    writeFileSync(join(bin, name), text);
    chmodSync(join(bin, name), 0o755);
  }
  const log = join(root, "calls.log");
  writeFileSync(log, "");
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
    FAKE_SYSTEMD_LOG: log,
    FAKE_SYSTEMD_STATE: join(root, "state"),
  };
  if (options.down !== undefined) env["FAKE_SYSTEMD_DOWN"] = options.down;
  return {
    bin,
    env,
    calls: () =>
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== ""),
    clearCalls: () => writeFileSync(log, ""),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
