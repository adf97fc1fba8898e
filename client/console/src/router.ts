// The console's routes are paths (/jobs/NAME, /runs/ID, ...): cschedd
// answers index.html for every path that is not the API's, so a reload or
// a shared link opens the same page.
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

export function navigate(to: string) {
  if (to !== location.pathname + location.search) history.pushState(null, "", to);
  listeners.forEach((f) => f());
}

window.addEventListener("popstate", () => listeners.forEach((f) => f()));

/* The current path; re-renders its component when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const f = () => setPath(location.pathname);
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return path;
}

/* A filter kept in the address (?name=value): its value, re-read when a
 * link or Back changes it, and a setter that writes it there in place, as
 * the jobs page keeps its filters. */
export function useParam(name: string): [string, (value: string) => void] {
  const read = () => new URLSearchParams(location.search).get(name) ?? "";
  const [value, setValue] = useState(read);
  useEffect(() => {
    const f = () => setValue(read());
    listeners.add(f);
    return () => void listeners.delete(f);
  }, [name]);
  const set = (v: string) => {
    const q = new URLSearchParams(location.search);
    if (v) q.set(name, v);
    else q.delete(name);
    const s = q.toString();
    history.replaceState(null, "", location.pathname + (s ? `?${s}` : ""));
    setValue(v);
  };
  return [value, set];
}

/* A click on a same-origin link changes the route without a reload. */
export function linkClick(e: MouseEvent) {
  const a = (e.target as Element).closest?.("a");
  if (!a || a.target || a.hasAttribute("download") || e.button !== 0) return;
  if (e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href);
  if (url.origin !== location.origin) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
}
