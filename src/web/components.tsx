/**
 * Small building blocks shared by the views: an error box, a loading line, and a titled
 * text that isolates its direction (RTL control characters in stored titles cannot flip
 * the surrounding layout).
 *
 * @module
 */
import type { ComponentChildren } from "preact";
import type { ApiError } from "./api-client.js";

/** An error message (role=alert) with an optional retry. */
export function ErrorBox(props: { error: ApiError | Error; onRetry?: () => void }): preact.JSX.Element {
  return (
    <div class="error" role="alert">
      <p>{props.error.message}</p>
      {props.onRetry ? (
        <button type="button" onClick={props.onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** A polite "loading" line for screen readers and eyes. */
export function Loading(props: { label?: string }): preact.JSX.Element {
  return (
    <p class="loading" role="status" aria-live="polite">
      {props.label ?? "Loading…"}
    </p>
  );
}

/** Untrusted text in its own bidi isolate (`<bdi>`), wrapped anywhere when too long. */
export function Untrusted(props: { children: ComponentChildren; class?: string }): preact.JSX.Element {
  return <bdi class={`untrusted ${props.class ?? ""}`.trim()}>{props.children}</bdi>;
}
