/**
 * URL-driven state of the page. Every path is relative to the page's mount point (the
 * document's `<base href>`, which the server sets so it works under any reverse-proxy
 * prefix): `""` is the sessions list, `sessions/<id>` a transcript. Filters live in the
 * query string, so a view can be bookmarked, shared and reloaded.
 *
 * Links are plain `<a href>` with relative URLs (see {@link href}); {@link onLinkClick}
 * turns a plain left click into a history push instead of a page load.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";

/** Where the page is: the path under the mount point (no leading slash) and the query. */
export interface PageLocation {
  /** e.g. `""` or `sessions/20250301_143015_9f3a1c2e` (segments decoded by {@link matchPath}). */
  path: string;
  query: URLSearchParams;
}

/** A query for {@link href}: `undefined`, `null` and `""` values are left out; arrays repeat the key. */
export type QueryInput = Record<string, string | number | readonly string[] | null | undefined>;

const CHANGE = "threadline:navigate";

/** The mount point of the page, absolute (`https://host/prefix/ui/`). */
export function mountRoot(): URL {
  return new URL(".", document.baseURI);
}

/** The current location relative to the mount point. */
export function currentLocation(): PageLocation {
  const root = mountRoot().pathname;
  const here = window.location.pathname;
  const path = here.startsWith(root) ? here.slice(root.length) : "";
  return { path: path.replace(/\/+$/u, ""), query: new URLSearchParams(window.location.search) };
}

/** Builds a query string (`?a=1&b=x&b=y`, or `""`). */
export function queryString(query: QueryInput = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(key, v);
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/**
 * A link to a page path, as an absolute-path URL resolved against the mount point (so it is
 * right from any depth and under any prefix). Each segment of `segments` is percent-encoded.
 */
export function href(segments: readonly string[], query: QueryInput = {}): string {
  const path = segments.map((s) => encodeURIComponent(s)).join("/");
  const url = new URL(path + queryString(query), mountRoot());
  return url.pathname + url.search;
}

/** Goes to `target` (from {@link href}) without reloading; `replace` rewrites the current history entry. */
export function navigate(target: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, "", target);
  else window.history.pushState(null, "", target);
  window.dispatchEvent(new Event(CHANGE));
}

/** Click handler for in-page links: plain left clicks navigate in place; modified clicks open as usual. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.currentTarget ?? event.target) as HTMLAnchorElement | null;
  if (anchor === null || typeof anchor.href !== "string" || anchor.target === "_blank") return;
  const url = new URL(anchor.href);
  if (url.origin !== window.location.origin || !url.pathname.startsWith(mountRoot().pathname)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}

/** The current location, re-rendering on navigation (links, back/forward). */
export function useLocation(): PageLocation {
  const [location, setLocation] = useState(currentLocation);
  useEffect(() => {
    const update = (): void => setLocation(currentLocation());
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return location;
}

/**
 * Matches a path against a pattern of segments (`sessions/:id`); returns the decoded
 * parameters, or `null`. The empty pattern matches the empty path only.
 */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern === "" ? [] : pattern.split("/");
  const got = path === "" ? [] : path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    let g: string;
    try {
      g = decodeURIComponent(got[i]!);
    } catch {
      return null;
    }
    if (w.startsWith(":")) params[w.slice(1)] = g;
    else if (w !== g) return null;
  }
  return params;
}

let listHref: string | null = null;

/** Records the list view's URL (with its filters) so a transcript's "back" link returns to it. */
export function rememberListLocation(location: PageLocation): void {
  const q = location.query.toString();
  listHref = href([]) + (q === "" ? "" : `?${q}`);
}

/** The list view's last URL (its filters kept), or the plain list. */
export function listLocation(): string {
  return listHref ?? href([]);
}
