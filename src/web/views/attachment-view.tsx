/**
 * The attachments of a message (photos, voice notes, files people sent), under its text.
 *
 * Each is fetched from `GET /sessions/{id}/attachments/{sha256}` with the page's API client
 * (the key as a bearer token: an `<img src>` could not send it), turned into a `blob:` URL,
 * and shown:
 * - a JPEG, PNG, GIF or WebP image inline, as `<img>` with its caption (or file name) as alt
 *   text; any other image type (SVG above all) is never rendered, only offered as a download;
 * - audio in an `<audio controls>` player, video in a `<video controls>` player;
 * - anything else as a download link, saved with the sender's file name.
 *
 * The page's CSP allows exactly `img-src 'self' blob:` and `media-src blob:`: nothing remote
 * is ever loaded. Every `blob:` URL is revoked when the attachment leaves the page. Names and
 * captions are untrusted: rendered as text by Preact, never as HTML.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { type ApiError, apiBlob } from "../api-client.js";
import type { AttachmentRef, ContentPart } from "../api-types.js";
import { Untrusted } from "../components.js";
import { DownloadLink } from "../download-link.js";
import { formatBytes } from "../format.js";

/** Image types shown inline (raster images: nothing in them runs). */
const INLINE_IMAGES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

const essence = (mimeType: string): string => (mimeType.split(";")[0] ?? "").trim().toLowerCase();

/** The attachment parts of a message's content, in order. */
export function attachmentsOf(content: string | ContentPart[] | null): AttachmentRef[] {
  if (!Array.isArray(content)) return [];
  const out: AttachmentRef[] = [];
  for (const part of content) {
    const ref = part.type === "attachment" ? (part["attachment"] as AttachmentRef | undefined) : undefined;
    if (ref !== undefined && ref !== null && typeof ref === "object" && typeof ref.sha256 === "string" && typeof ref.mimeType === "string") out.push(ref);
  }
  return out;
}

/** How an attachment is shown. */
type Display = "image" | "audio" | "video" | "link";

/** Inline image only for a raster type; a player for audio and video; a link for the rest. */
export function displayOf(ref: AttachmentRef): Display {
  const type = essence(ref.mimeType);
  if (ref.kind === "image" && INLINE_IMAGES.has(type)) return "image";
  if (ref.kind === "audio" && type.startsWith("audio/")) return "audio";
  if (ref.kind === "video" && type.startsWith("video/")) return "video";
  return "link";
}

/** The name an attachment is saved as (mirrors the server's default name). */
function fileNameOf(ref: AttachmentRef): string {
  const name = (ref.fileName ?? "").split(/[/\\]/u).at(-1)?.trim() ?? "";
  return name !== "" ? name : `attachment-${ref.sha256.slice(0, 12)}`;
}

const pathOf = (sessionId: string, ref: AttachmentRef): string => `sessions/${encodeURIComponent(sessionId)}/attachments/${encodeURIComponent(ref.sha256)}`;

/** A `blob:` URL of the attachment's bytes (revoked on unmount), or the error that kept it. */
function useBlobUrl(path: string, accept: (type: string) => boolean): { url: string | null; error: ApiError | Error | null; refused: boolean } {
  const [state, setState] = useState<{ url: string | null; error: ApiError | Error | null; refused: boolean }>({ url: null, error: null, refused: false });
  useEffect(() => {
    const abort = new AbortController();
    let url: string | null = null;
    setState({ url: null, error: null, refused: false });
    apiBlob(path, { signal: abort.signal, cache: "default" })
      .then((blob) => {
        if (abort.signal.aborted) return;
        // The server's Content-Type decides too: what it does not serve as a raster image is not shown as one.
        if (!accept(essence(blob.type))) {
          setState({ url: null, error: null, refused: true });
          return;
        }
        url = URL.createObjectURL(blob);
        setState({ url, error: null, refused: false });
      })
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setState({ url: null, error: e instanceof Error ? e : new Error(String(e)), refused: false });
      });
    return () => {
      abort.abort();
      if (url !== null) URL.revokeObjectURL(url);
    };
  }, [path]);
  return state;
}

/** What the attachment is, in words: `photo.jpg · image/jpeg · 200 KB`. */
function Description(props: { attachment: AttachmentRef }): preact.JSX.Element {
  const a = props.attachment;
  return (
    <span class="attachment-facts">
      {a.voice === true ? "Voice note · " : null}
      {a.fileName ? (
        <>
          <Untrusted class="attachment-name">{a.fileName}</Untrusted>
          {" · "}
        </>
      ) : null}
      <Untrusted>{a.mimeType}</Untrusted> · {formatBytes(a.size)}
    </span>
  );
}

function Unavailable(props: { error: ApiError | Error }): preact.JSX.Element {
  const code = (props.error as Partial<ApiError>).code;
  const notStored = code === "TL_ERR_NOT_FOUND" && /exported without media/u.test(props.error.message);
  return (
    <span class="attachment-missing error" title={props.error.message}>
      {notStored
        ? "Not stored: this session was imported from a copy exported without media."
        : `${code === "TL_ERR_NOT_FOUND" ? "Not available" : "Could not load it"}: ${props.error.message}`}
    </span>
  );
}

function Player(props: { sessionId: string; attachment: AttachmentRef; display: "image" | "audio" | "video" }): preact.JSX.Element {
  const { attachment: a, display } = props;
  const path = pathOf(props.sessionId, a);
  const accept = display === "image" ? (type: string) => INLINE_IMAGES.has(type) : (type: string) => type.startsWith(`${display}/`);
  const { url, error, refused } = useBlobUrl(path, accept);
  const caption = a.caption ?? null;
  const alt = caption ?? a.fileName ?? (display === "image" ? "image" : display);
  let media: preact.JSX.Element | null = null;
  if (url !== null) {
    if (display === "image") media = <img class="attachment-image" src={url} alt={alt} />;
    // No timed captions exist: a transcribed voice note's transcript is the message's text, shown above the player.
    // biome-ignore lint/a11y/useMediaCaption: no caption track exists for people's recordings (see above).
    else if (display === "audio") media = <audio class="attachment-audio" controls preload="metadata" src={url} aria-label={alt} />;
    // biome-ignore lint/a11y/useMediaCaption: no caption track exists for people's recordings (see above).
    else media = <video class="attachment-video" controls preload="metadata" src={url} aria-label={alt} />;
  }
  return (
    <figure class={`attachment attachment-${display}`} data-sha256={a.sha256}>
      {media}
      {url === null && error === null && !refused ? <span class="attachment-loading">Loading {display}…</span> : null}
      {error !== null ? <Unavailable error={error} /> : null}
      <figcaption>
        {caption !== null && caption !== "" ? (
          <>
            <Untrusted class="attachment-caption">{caption}</Untrusted>
            <br />
          </>
        ) : null}
        <Description attachment={a} />
        {error === null ? (
          <>
            {" · "}
            <DownloadLink path={path} filename={fileNameOf(a)} label="Download" class="attachment-download" />
          </>
        ) : null}
      </figcaption>
    </figure>
  );
}

/** One attachment: a player or a download link. */
export function AttachmentItem(props: { sessionId: string; attachment: AttachmentRef }): preact.JSX.Element {
  const display = displayOf(props.attachment);
  if (display !== "link") return <Player sessionId={props.sessionId} attachment={props.attachment} display={display} />;
  const a = props.attachment;
  return (
    <figure class="attachment attachment-file" data-sha256={a.sha256}>
      <DownloadLink path={pathOf(props.sessionId, a)} filename={fileNameOf(a)} label={`Download ${fileNameOf(a)}`} class="attachment-download" />
      <figcaption>
        {a.caption ? (
          <>
            <Untrusted class="attachment-caption">{a.caption}</Untrusted>
            <br />
          </>
        ) : null}
        <Description attachment={a} />
      </figcaption>
    </figure>
  );
}

/** The attachments of one message (nothing when it has none). */
export function Attachments(props: { sessionId: string; content: string | ContentPart[] | null }): preact.JSX.Element | null {
  const items = attachmentsOf(props.content);
  if (items.length === 0) return null;
  return (
    <div class="attachments">
      {items.map((a, i) => (
        <AttachmentItem key={`${a.sha256}-${i}`} sessionId={props.sessionId} attachment={a} />
      ))}
    </div>
  );
}
