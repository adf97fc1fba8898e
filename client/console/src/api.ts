// The console's only way to cschedd: the Connect protocol's unary JSON
// (POST /csched.v1.Scheduler/<Method>) and server-sent events for the two
// streams, with messages read and written by the types generated from
// proto/csched/v1 (docs/http.md).
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { DescMethodStreaming, DescMethodUnary } from "@bufbuild/protobuf";
import { Scheduler } from "./gen/csched/v1/scheduler_pb";

export { Scheduler };

/* A call that ended with a Connect error: code is its name ("not_found"). */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly violations: string[] = [],
  ) {
    super(message);
  }
}

let onUnauthenticated: () => void = () => {};

/* Called when a call is refused for want of a session: the page shows the
 * login form. */
export function whenUnauthenticated(f: () => void) {
  onUnauthenticated = f;
}

const path = (method: { parent: { typeName: string }; name: string }) =>
  `/${method.parent.typeName}/${method.name}`;

/* The field violations a google.rpc.BadRequest detail carries, from the
 * "debug" form Connect servers add beside the binary value. */
function violationsOf(details: unknown): string[] {
  if (!Array.isArray(details)) return [];
  const out: string[] = [];
  for (const d of details) {
    const list = d?.debug?.fieldViolations;
    if (!Array.isArray(list)) continue;
    for (const v of list) out.push(`${v.field}: ${v.description}`);
  }
  return out;
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: any = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON: a proxy's page; the status says enough */
  }
  const code = typeof body?.code === "string" ? body.code : `http_${res.status}`;
  const message = typeof body?.message === "string" ? body.message : res.statusText;
  return new ApiError(code, message, violationsOf(body?.details));
}

export async function call<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
): Promise<MessageShape<O>> {
  const res = await fetch(path(method), {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
    body: JSON.stringify(toJson(method.input, create(method.input, request))),
  });
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401) onUnauthenticated();
    throw err;
  }
  return fromJson(method.output, await res.json(), { ignoreUnknownFields: true });
}

/* A server-sent event stream of a streaming method. With resume (Watch),
 * EventSource reconnects by itself after a drop and sends Last-Event-ID, so
 * the server goes on after the last event seen; without it (a log, which
 * ends when its attempt has), the end of the connection is the stream's
 * end. close() ends it for good. */
export function stream<I extends DescMessage, O extends DescMessage>(
  method: DescMethodStreaming<I, O>,
  request: MessageInitShape<I>,
  handlers: {
    message: (m: MessageShape<O>) => void;
    error?: (e: ApiError) => void;
    end?: () => void;
  },
  resume = true,
): { close(): void } {
  const message = JSON.stringify(toJson(method.input, create(method.input, request)));
  const url = `${path(method)}?encoding=json&message=${encodeURIComponent(message)}`;
  const source = new EventSource(url, { withCredentials: true });
  source.onmessage = (e: MessageEvent<string>) =>
    handlers.message(fromJson(method.output, JSON.parse(e.data), { ignoreUnknownFields: true }));
  source.addEventListener("end", () => {
    source.close();
    handlers.end?.();
  });
  source.addEventListener("error", (e: Event) => {
    const data = (e as MessageEvent<string>).data;
    if (typeof data === "string" && data !== "") {
      /* The server ended the stream with a Connect error. */
      source.close();
      let body: any = {};
      try {
        body = JSON.parse(data);
      } catch {
        body = { code: "unknown", message: data };
      }
      if (body.code === "unauthenticated") onUnauthenticated();
      handlers.error?.(new ApiError(body.code, body.message, violationsOf(body.details)));
    } else if (source.readyState === EventSource.CLOSED) {
      handlers.error?.(new ApiError("unavailable", "the stream was refused"));
    } else if (!resume) {
      source.close();
      handlers.end?.();
    }
  });
  return { close: () => source.close() };
}

export async function login(token: string): Promise<void> {
  const res = await fetch("/login", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }),
  });
  if (!res.ok) throw await errorOf(res);
}

export async function logout(): Promise<void> {
  const res = await fetch("/logout", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: "{}",
  });
  if (!res.ok) throw await errorOf(res);
}

/* int64 fields arrive as bigint; every one the console shows fits a double. */
export const num = (v: bigint | number): number => Number(v);
