/**
 * The error of the service commands: {@link ServiceManagerError}, when there is no service
 * manager to talk to or it refused a command. Its code is `TL_ERR_UNAVAILABLE` (exit 1).
 *
 * @module
 */
import { ThreadlineError } from "../store/index.js";

/**
 * No systemd or launchd answered (this machine has none, or it is not running), or the manager
 * refused a command (`systemctl enable` failed, …). The message says what happened and what to
 * run instead; the manager's own words are in it where it said any.
 */
export class ServiceManagerError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_UNAVAILABLE", message, options);
  }
}

/** What to do where no service manager runs: the sentence every refusal ends with. */
export const WITHOUT_A_MANAGER =
  "Run `threadline serve` under a supervisor of your own (it drains and exits 0 on SIGTERM), use the container image (docs/deploy.md), " +
  "or review the definition with `threadline service install --dry-run`.";
