#!/usr/bin/python3
"""The HTTP/JSON API (docs/http.md) over real HTTPS on loopback, with the
standard library only, against a real cschedd (test_interop's Server: its
embedded PostgreSQL, real minders, TLS certificates from make_certs.sh and a
tokens file), started with --http-listen and a --console-dir of its own.

Every method through JSON; errors with Connect's codes, HTTP statuses and
the BadRequest field violations; the method x role matrix generated from the
one access table (server/auth/access.c); 401/403; sessions; CSRF; the body
limit (413); the open-stream limit (429); Watch over server-sent events
resumed by Last-Event-ID across a forced disconnect, gap-free; stalled SSE
readers that must not grow cschedd's memory; the console's files and path
traversal. Run with /usr/bin/python3.
"""

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import sys
import tempfile
import time
import unittest
import urllib.parse

MY_PARSER = argparse.ArgumentParser(add_help=False)
MY_PARSER.add_argument("--access-table", required=True, help="server/auth/access.c")
MY_ARGS, REST = MY_PARSER.parse_known_args()
sys.argv = [sys.argv[0]] + REST

import test_interop  # noqa: E402  (parses the common arguments)

ARGS = test_interop.ARGS
ADMIN, OPERATOR, VIEWER = "http-admin-token-0123456789", "http-operator-token-01234", \
    "http-viewer-token-0123456789"
REVOKED = "http-revoked-token-0123456789"
TOKENS = (("http-admin", "admin", ADMIN), ("http-operator", "operator", OPERATOR),
          ("http-viewer", "viewer", VIEWER), ("http-revoked", "viewer", REVOKED))
ROLE_TOKEN = {"viewer": VIEWER, "operator": OPERATOR, "admin": ADMIN}
ROLE_RANK = {"none": 0, "viewer": 1, "operator": 2, "admin": 3}
SERVICE = "/csched.v1.Scheduler/"
CSP = "default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors 'none'"
TIMEOUT_S = 20


def free_port():
    """A free TCP port in 52000-52999, the range these tests may use."""
    for port in range(52000 + os.getpid() % 500, 53000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in 52000-52999")


def access_table():
    """{method: least role} from the one table in server/auth/access.c."""
    with open(MY_ARGS.access_table) as f:
        text = f.read()
    rows = re.findall(r'\{SCHED\("(\w+)"\), CS_ROLE_(\w+), (?:true|false)\}', text)
    assert len(rows) >= 18, "the access table did not parse: %r" % rows
    return {m: role.lower() for m, role in rows}


def service_methods():
    """{method: (request type, streams)} as the .proto declares them."""
    with open(os.path.join(ARGS.proto_dir, "csched", "v1", "scheduler.proto")) as f:
        text = f.read()
    return {m: (req, bool(stream)) for m, req, stream in
            re.findall(r"rpc (\w+)\((\w+)\) returns \((stream )?\w+\)", text)}


class HttpApiTest(test_interop.ServerTest):
    server_tokens = TOKENS

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.console = tempfile.mkdtemp(prefix="csched-http-console-")
        os.makedirs(os.path.join(cls.console, "assets"))
        with open(os.path.join(cls.console, "index.html"), "w") as f:
            f.write("<!doctype html><title>console</title>\n")
        with open(os.path.join(cls.console, "assets", "app-1a2b3c.js"), "w") as f:
            f.write("console.log(1)\n")
        os.symlink("/etc/hostname", os.path.join(cls.console, "leak.txt"))
        os.symlink("/etc", os.path.join(cls.console, "etc"))
        cls.server_args = ("--http-listen", "127.0.0.1:%d" % cls.port,
                           "--console-dir", cls.console, "--max-streams", "1000")
        super().setUpClass()
        cls.tls = ssl.create_default_context(cafile=cls.server.cert("ca.pem"))
        cls.origin = "https://127.0.0.1:%d" % cls.port

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.console, ignore_errors=True)
        super().tearDownClass()

    def conn(self):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.tls,
                                           timeout=TIMEOUT_S)

    def request(self, method, path, body=None, token=ADMIN, headers=None, raw=None):
        """(status, headers, the body's JSON or text)."""
        h = {"Content-Type": "application/json"}
        if token is not None:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        c = self.conn()
        try:
            data = raw if raw is not None else (json.dumps(body) if body is not None else None)
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            text = r.read().decode()
            self.assertEqual(r.getheader("Content-Security-Policy"), CSP, path)
            self.assertEqual(r.getheader("X-Content-Type-Options"), "nosniff", path)
            self.assertIsNone(r.getheader("Access-Control-Allow-Origin"), path)
            ctype = r.getheader("Content-Type") or ""
            return r.status, r, json.loads(text) if ctype.startswith("application/json") else text
        finally:
            c.close()

    def call(self, method, body, token=ADMIN, want=200, headers=None):
        status, _, reply = self.request("POST", SERVICE + method, body, token, headers)
        self.assertEqual(status, want, "%s %r -> %r" % (method, body, reply))
        return reply

    def open_stream(self, method, body, token=ADMIN, last_event_id=None):
        """An SSE stream: (connection, response)."""
        q = urllib.parse.urlencode({"encoding": "json", "message": json.dumps(body)})
        h = {"Accept": "text/event-stream", "Authorization": "Bearer " + token}
        if last_event_id is not None:
            h["Last-Event-ID"] = last_event_id
        c = self.conn()
        c.request("GET", SERVICE + method + "?" + q, headers=h)
        return c, c.getresponse()

    @staticmethod
    def events(resp):
        """Yields (id, event, data) of each server-sent event."""
        ev = {}
        while True:
            line = resp.readline()
            if not line:
                return
            line = line.decode().rstrip("\n")
            if line == "":
                if "data" in ev:
                    yield ev.get("id"), ev.get("event"), json.loads(ev["data"])
                ev = {}
            elif not line.startswith(":"):
                k, _, v = line.partition(": ")
                ev[k] = v

    def make_job(self, name, **spec):
        job = {"name": name} if "shell" in spec else {"name": name, "command": ["/bin/true"]}
        job.update(spec)
        return self.call("CreateJob", {"job": job})

    def wait_run(self, run_id):
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            run = self.call("GetRun", {"runId": run_id})
            if run["state"] in ("RUN_STATE_SUCCEEDED", "RUN_STATE_FAILED",
                                "RUN_STATE_CANCELLED", "RUN_STATE_TIMED_OUT"):
                return run
            time.sleep(0.05)
        self.fail("run %s did not end" % run_id)

    # --- every method ---------------------------------------------------

    def test_every_method_through_json(self):
        seen = set()

        def call(method, body, want=200):
            seen.add(method)
            return self.call(method, body, want=want)

        job = call("CreateJob", {"job": {"name": "every", "shell": "echo out; echo err >&2",
                                          "labels": {"team": "web"},
                                          "schedule": {"text": "0 3 * * *",
                                                       "timeZone": "Europe/Berlin"}}})
        self.assertEqual(job["version"], "1")  # int64 as a string
        self.assertEqual(job["createdBy"], "token:http-admin")
        job["shell"] = "echo out; echo err >&2; exit 0"
        self.assertEqual(call("UpdateJob", {"job": job})["version"], "2")
        self.assertEqual(call("GetJob", {"name": "every"})["labels"], {"team": "web"})
        self.assertIn("every", [j["name"] for j in call("ListJobs", {})["jobs"]])
        run = call("TriggerJob", {"job_name": "every"})  # the .proto's name works too
        self.assertEqual(self.wait_run(run["id"])["state"], "RUN_STATE_SUCCEEDED")
        self.assertEqual(call("GetRun", {"runId": int(run["id"])})["jobName"], "every")
        self.assertTrue(call("ListRuns", {"jobName": "every"})["runs"])
        other = call("TriggerJob", {"jobName": "every"})
        status, _, reply = self.request("POST", SERVICE + "CancelRun", {"runId": other["id"]})
        seen.add("CancelRun")
        self.assertIn(status, (200, 400), reply)  # it may have ended already
        self.assertIn("maxRunning", call("GetStats", {}))
        self.assertTrue(call("ListAudit", {})["entries"])
        self.assertTrue(call("PauseJob", {"name": "every"})["paused"])
        self.assertFalse(call("ResumeJob", {"name": "every"})["paused"])
        now_ms = int(time.time() * 1000)
        call("BackfillJob", {"name": "every", "fromUnixMs": str(now_ms - 3 * 86400000),
                             "toUnixMs": str(now_ms - 86400000)})
        call("ListSlots", {"jobName": "every"})
        self.assertTrue(call("ListReplicas", {})["replicas"])
        self.assertEqual(call("SetClusterLimits", {}), {"maxRunning": 0})  # none, as it was
        self.assertEqual(call("ListHookDeliveries", {"jobName": "every"}), {"deliveries": []})
        fires = call("ListFires", {"labelSelector": "team=web"})["jobs"]
        self.assertEqual([(j["jobName"], len(j["atUnixMs"])) for j in fires], [("every", 1)])
        self.assertEqual(call("ListDependencyCauses", {"jobName": "every"}), {"causes": []})
        c, r = self.open_stream("ReadLogs", {"runId": run["id"]})
        seen.add("ReadLogs")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "text/event-stream")
        got = [d for _, _, d in self.events(r)]
        c.close()
        self.assertIn("LOG_STREAM_STDOUT", [d["stream"] for d in got])
        c, r = self.open_stream("Watch", {"afterSeq": "0", "jobName": "every"})
        seen.add("Watch")
        self.assertEqual(r.status, 200)
        _, _, first = next(self.events(r))
        c.close()
        self.assertEqual(first["events"][0]["jobName"], "every")
        for r in self.call("ListRuns", {"jobName": "every"})["runs"]:
            self.wait_run(r["id"])  # the backfilled ones too: a job with runs stays
        call("DeleteJob", {"name": "every"})
        self.assertEqual(seen, set(service_methods()), "a method of the .proto was not called")

    # --- errors -----------------------------------------------------------

    def violation(self, reply):
        detail = reply["details"][0]
        self.assertEqual(detail["type"], "google.rpc.BadRequest")
        self.assertTrue(detail["value"])
        return detail["debug"]["fieldViolations"][0]["field"]

    def test_errors_codes_and_field_violations(self):
        r = self.call("CreateJob", {"job": {"name": "x", "bogus": 1}}, want=400)
        self.assertEqual(r["code"], "invalid_argument")
        self.assertEqual(self.violation(r), "job.bogus")
        r = self.call("CreateJob", {"job": {"name": "x", "maxRunning": "many"}}, want=400)
        self.assertEqual(self.violation(r), "job.max_running")
        status, _, r = self.request("POST", SERVICE + "GetJob", raw='{"name":')
        self.assertEqual((status, r["code"]), (400, "invalid_argument"))
        # The server's own validation, with the field it names, as gRPC's.
        r = self.call("CreateJob", {"job": {"name": "", "command": ["true"]}}, want=400)
        self.assertEqual(self.violation(r), "job.name")
        self.assertEqual(self.call("GetJob", {"name": "no-such"}, want=404)["code"], "not_found")
        self.make_job("twice")
        r = self.call("CreateJob", {"job": {"name": "twice", "command": ["/bin/true"]}},
                      want=409)
        self.assertEqual(r["code"], "already_exists")
        status, _, r = self.request("POST", SERVICE + "NoSuchMethod", {})
        self.assertEqual((status, r["code"]), (404, "unimplemented"))
        status, _, r = self.request("GET", SERVICE + "GetJob")
        self.assertEqual(status, 405)

    # --- roles ------------------------------------------------------------

    def test_role_matrix_from_the_access_table(self):
        table = access_table()
        methods = service_methods()
        self.assertEqual(set(methods), set(table), "the access table and the .proto differ")
        for method, (_, stream) in sorted(methods.items()):
            need = table[method]
            for role in ("none", "viewer", "operator", "admin"):
                token = ROLE_TOKEN.get(role)
                if stream:
                    c, r = self.open_stream(method, {"runId": "999999"} if method == "ReadLogs"
                                            else {}, token or "")
                    status = r.status
                    c.close()
                else:
                    status, _, _ = self.request("POST", SERVICE + method, {}, token)
                want_refused = 401 if role == "none" else 403
                with self.subTest(method=method, role=role, need=need):
                    if ROLE_RANK[role] < ROLE_RANK[need]:
                        self.assertEqual(status, want_refused)
                    else:
                        self.assertNotIn(status, (401, 403))

    # --- authentication and sessions ----------------------------------

    def test_unauthenticated_and_forbidden(self):
        status, r, body = self.request("POST", SERVICE + "ListJobs", {}, token=None)
        self.assertEqual((status, body["code"]), (401, "unauthenticated"))
        self.assertEqual(r.getheader("WWW-Authenticate"), "Bearer")
        status, _, body = self.request("POST", SERVICE + "ListJobs", {}, token="wrong")
        self.assertEqual(status, 401)
        status, _, body = self.request("POST", SERVICE + "DeleteJob", {"name": "x"},
                                       token=VIEWER)
        self.assertEqual((status, body["code"]), (403, "permission_denied"))

    def served_certificate(self):
        """The DER of the certificate the HTTPS port serves to a new
        connection now (trusted through the test CA)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT_S) as s:
            with self.tls.wrap_socket(s, server_hostname="127.0.0.1") as t:
                return t.getpeercert(binary_form=True)

    def test_https_certificate_renewed_on_sighup(self):
        """A new certificate and key in --tls-cert's and --tls-key's files
        are served from the SIGHUP on, without a restart; not before it."""
        def der(name):
            with open(self.server.cert(name)) as f:
                return ssl.PEM_cert_to_DER_cert(f.read())

        before = self.served_certificate()
        self.assertEqual(before, der("server.pem"))
        want = der("peer.pem")  # another key and certificate from the same CA
        self.assertNotEqual(before, want)
        for name in ("pem", "key"):
            shutil.copyfile(self.server.cert("peer." + name), self.server.cert("server." + name))
        self.assertEqual(self.served_certificate(), before)
        self.server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + TIMEOUT_S
        while self.served_certificate() != want and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.served_certificate(), want)
        self.call("ListJobs", {})

    def test_session_cookie(self):
        status, r, _ = self.request("POST", "/login", {"token": "wrong"}, token=None)
        self.assertEqual(status, 401)
        status, r, _ = self.request("POST", "/login", {"token": OPERATOR}, token=None)
        self.assertEqual(status, 200)
        cookie = r.getheader("Set-Cookie")
        for attr in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/"):
            self.assertIn(attr, cookie)
        session = re.match(r"csched_session=([0-9a-f]{64});", cookie)
        self.assertIsNotNone(session, cookie)
        h = {"Cookie": "csched_session=" + session.group(1)}
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {}, token=None, headers=h)
        self.assertEqual(status, 200)
        status, _, _ = self.request("POST", SERVICE + "DeleteJob", {"name": "x"}, token=None,
                                    headers=h)
        self.assertEqual(status, 403)  # the session holds the operator's role, no more
        status, r, _ = self.request("POST", "/logout", {}, token=None, headers=h)
        self.assertIn("Max-Age=0", r.getheader("Set-Cookie"))
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {}, token=None, headers=h)
        self.assertEqual(status, 401)

    def test_session_ends_when_its_token_is_revoked(self):
        status, r, _ = self.request("POST", "/login", {"token": REVOKED}, token=None)
        self.assertEqual(status, 200)
        h = {"Cookie": r.getheader("Set-Cookie").split(";")[0]}
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {}, token=None, headers=h)
        self.assertEqual(status, 200)
        path = self.server.cert("tokens")
        with open(path) as f:
            kept = [line for line in f if not line.startswith("http-revoked ")]
        with open(path, "w") as f:
            f.writelines(kept)
        self.server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + TIMEOUT_S
        while status == 200 and time.monotonic() < deadline:
            time.sleep(0.1)
            status, _, body = self.request("POST", SERVICE + "ListJobs", {}, token=None,
                                           headers=h)
        self.assertEqual(status, 401)
        status, _, body = self.request("POST", SERVICE + "ListJobs", {}, token=None, headers=h)
        self.assertIn("session has ended", body["message"])  # dropped, not asked again

    def test_audit_names_the_caller(self):
        self.make_job("audited")
        self.call("PauseJob", {"name": "audited"}, token=OPERATOR)
        entries = self.call("ListAudit", {})["entries"]
        mine = [e for e in entries if "audited" in json.dumps(e)]
        self.assertTrue(any("token:http-operator" in json.dumps(e) for e in mine), mine)

    def test_viewer_sees_secret_references_only(self):
        self.make_job("secretive", secretEnv={"API_KEY": {"serverEnv": "HOME"}})
        job = self.call("GetJob", {"name": "secretive"}, token=VIEWER)
        self.assertEqual(job["secretEnv"], {"API_KEY": {"serverEnv": "HOME"}})
        self.assertNotIn(os.environ.get("HOME", "/root"), json.dumps(job["secretEnv"]) + "x:")

    # --- CSRF, limits -----------------------------------------------------

    def test_csrf(self):
        status, _, body = self.request("POST", SERVICE + "ListJobs", {},
                                       headers={"Origin": "https://evil.example"})
        self.assertEqual((status, body["code"]), (403, "permission_denied"))
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {},
                                    headers={"Content-Type": "text/plain"})
        self.assertEqual(status, 403)
        status, _, _ = self.request("POST", SERVICE + "ListJobs", raw="a=b", headers={
            "Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 403)
        status, _, _ = self.request("POST", "/login", {"token": ADMIN}, token=None,
                                    headers={"Origin": "https://evil.example"})
        self.assertEqual(status, 403)
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {},
                                    headers={"Origin": self.origin})
        self.assertEqual(status, 200)

    def raw_request(self, head, body=b""):
        """Sends head (and body) on a socket of its own: the response's status."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT_S) as raw:
            with self.tls.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(head.encode() + body)
                return int(s.recv(4096).split(b" ")[1])

    def test_body_limit(self):
        head = ("POST %sGetJob HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\n" % (SERVICE, ADMIN))
        # Announced too large: refused before the body is sent.
        self.assertEqual(self.raw_request(head + "Content-Length: %d\r\n\r\n" % (2 << 20)),
                         413)
        # Chunked past the limit: read, dropped, refused.
        chunk = b"a" * (64 << 10)
        body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20)) + b"0\r\n\r\n"
        self.assertEqual(self.raw_request(head + "Transfer-Encoding: chunked\r\n\r\n", body),
                         413)
        status, _, _ = self.request("POST", SERVICE + "ListJobs", {})
        self.assertEqual(status, 200)

    def test_open_streams_per_caller(self):
        opened = []
        try:
            for _ in range(8):  # STREAMS_PER_CALLER (server/http/http_thread.c)
                c, r = self.open_stream("Watch", {}, token=VIEWER)
                opened.append(c)
                self.assertEqual(r.status, 200)
            c, r = self.open_stream("Watch", {}, token=VIEWER)
            opened.append(c)
            self.assertEqual(r.status, 429)
            self.assertEqual(json.loads(r.read())["code"], "resource_exhausted")
            c, r = self.open_stream("Watch", {}, token=OPERATOR)  # another caller still may
            opened.append(c)
            self.assertEqual(r.status, 200)
        finally:
            for c in opened:
                c.close()

    # --- server-sent events -----------------------------------------------

    def test_watch_resumes_gap_free_by_last_event_id(self):
        self.make_job("resume")
        for _ in range(3):
            self.wait_run(self.call("TriggerJob", {"jobName": "resume"})["id"])
        c, r = self.open_stream("Watch", {"afterSeq": "0"})
        seqs, last_id = [], None
        for ev_id, _, data in self.events(r):
            seqs += [int(e["seq"]) for e in data["events"]]
            last_id = ev_id
            self.assertEqual(int(ev_id), seqs[-1])
            if len(seqs) >= 6:
                break
        c.sock.shutdown(socket.SHUT_RDWR)  # a forced disconnect, mid-stream
        c.close()
        for _ in range(3):
            self.wait_run(self.call("TriggerJob", {"jobName": "resume"})["id"])
        last_seq = int(self.call("GetStats", {})["lastSeq"])
        c, r = self.open_stream("Watch", {}, last_event_id=last_id)  # overrides the request
        c.sock.settimeout(5)  # the replay comes at once; a gap would wait for a keep-alive
        for _, _, data in self.events(r):
            seqs += [int(e["seq"]) for e in data["events"]]
            if seqs[-1] >= last_seq:
                break
        c.close()
        self.assertEqual(seqs, list(range(seqs[0], last_seq + 1)), "gaps or repeats")
        c, r = self.open_stream("Watch", {}, last_event_id="not-a-seq")
        self.assertEqual(r.status, 400)
        c.close()

    def stalled_watch(self, token):
        """A Watch from the first event whose reader never reads."""
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", self.port))
        s = self.tls.wrap_socket(s, server_hostname="127.0.0.1")
        q = urllib.parse.urlencode({"encoding": "json", "message": '{"afterSeq":"0"}'})
        s.sendall(("GET %sWatch?%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n"
                   % (SERVICE, q, self.port, token)).encode())
        return s

    def run_many(self, job, n):
        """Triggers job n times and waits for the queue to empty: the
        workload whose memory the stalled readers must not add to."""
        for _ in range(n):
            self.call("TriggerJob", {"jobName": job})
        deadline = time.monotonic() + 60
        while self.call("GetStats", {})["queued"] > 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        return test_interop.peak_rss_kb(self.server.proc.pid)

    def test_stalled_readers_do_not_grow_memory(self):
        self.make_job("stall", maxRunning=8)
        # The same workload once without stalled readers: what it costs
        # alone (more under the sanitizers, whose quarantine holds what is
        # freed) is the yardstick.
        start_kb = test_interop.peak_rss_kb(self.server.proc.pid)
        alone_kb = self.run_many("stall", 300) - start_kb
        stalled = []
        for token in (ADMIN, OPERATOR):
            for _ in range(8):
                stalled.append(self.stalled_watch(token))
        time.sleep(1)
        before_kb = test_interop.peak_rss_kb(self.server.proc.pid)
        try:
            grew_kb = self.run_many("stall", 300) - before_kb
            self.assertLess(grew_kb, alone_kb + (32 << 10),
                            "cschedd's peak memory grew by %d KiB with 16 stalled readers, "
                            "%d KiB without" % (grew_kb, alone_kb))
            status, _, _ = self.request("POST", SERVICE + "GetStats", {})
            self.assertEqual(status, 200)  # and the loop answers
        finally:
            for s in stalled:
                s.close()

    # --- the console's files --------------------------------------------

    def test_static_files_and_traversal(self):
        status, r, body = self.request("GET", "/", token=None)
        self.assertEqual((status, r.getheader("Content-Type")), (200, "text/html; charset=utf-8"))
        self.assertIn("console", body)
        status, r, body = self.request("GET", "/jobs/nightly", token=None)
        self.assertEqual(status, 200)  # a route of the console gets index.html
        status, r, _ = self.request("GET", "/assets/app-1a2b3c.js", token=None)
        self.assertEqual(r.getheader("Content-Type"), "text/javascript; charset=utf-8")
        self.assertIn("immutable", r.getheader("Cache-Control"))
        for path in ("/leak.txt", "/etc/hostname.txt", "/../../../etc/hostname.txt",
                     "/%2e%2e/%2e%2e/etc/os-release.txt", "/assets/../../secret.txt",
                     "/..%2f..%2fetc%2fhostname.txt", "/assets/missing.js"):
            c = self.conn()
            c.putrequest("GET", path, skip_accept_encoding=True)  # sent as written
            c.endheaders()
            r = c.getresponse()
            text = r.read().decode(errors="replace")
            c.close()
            with self.subTest(path=path):
                self.assertEqual(r.status, 404, text)
        with open("/etc/hostname") as f:
            secret = f.read().strip()
        status, _, body = self.request("GET", "/leak.txt", token=None)
        self.assertNotIn(secret, body if secret else "x")


class StandbyServer(test_interop.Server):
    """A replica that joins as a standby: it writes no ready file (it does
    once it becomes active), so it is ready when its log says it joined."""

    def _wait_ready(self):
        deadline = time.monotonic() + test_interop.READY_TIMEOUT_S
        while time.monotonic() < deadline and self.proc.poll() is None:
            if " as a standby" in self.log_text():
                return None
            time.sleep(0.05)
        raise RuntimeError("no standby:\n" + self.log_text())


class StandbyTest(unittest.TestCase):
    """Two replicas on the active one's embedded PostgreSQL: a call made over
    HTTP to the standby is relayed to the active one, as a gRPC call is."""

    def audit_of(self, active):
        """The active replica's audit trail, asked over gRPC: the relayed
        call is recorded there, naming the standby it came through."""
        channel = active.channel(test_interop.ADMIN_TOKEN)
        try:
            stub = test_interop.scheduler_pb2_grpc.SchedulerStub(channel)
            entries = stub.ListAudit(test_interop.pb.ListAuditRequest(),
                                     timeout=TIMEOUT_S).entries
        finally:
            channel.close()
        rows = [e for e in entries if e.job_name == "relayed"]
        self.assertEqual([e.identity for e in rows], ["token:http-admin via http-b"])
        return str(rows)

    @contextlib.contextmanager
    def two_replicas(self):
        """An active replica on its embedded PostgreSQL and a standby on the
        same database, each with --http-listen: (active, its port, standby,
        its port). Both stop at the end."""
        active_port = free_port()
        active = test_interop.Server(ARGS.bin_dir, (
            "--replica-id", "http-a", "--http-listen", "127.0.0.1:%d" % active_port),
            tokens=TOKENS + (("interop-admin", "admin", test_interop.ADMIN_TOKEN),))
        standby = None
        try:
            with open(os.path.join(active.state_dir, "pg", "password")) as f:
                password = f.read().strip()
            url = "postgresql://postgres:%s@/postgres?host=%s&port=5432" % (
                urllib.parse.quote(password), os.path.join(active.state_dir, "pg"))
            standby_port = free_port()
            standby = StandbyServer(ARGS.bin_dir, (
                "--replica-id", "http-b", "--database", url, "--peer-ca", active.cert("ca.pem"),
                "--http-listen", "127.0.0.1:%d" % standby_port), tokens=TOKENS)
            yield active, active_port, standby, standby_port
        finally:
            for server in (standby, active):
                if server is not None:
                    status = server.stop()
                    if status == 0:
                        server.remove()

    @staticmethod
    def post(server, port, path, body, headers):
        """(status, headers, JSON body) of a POST to a replica's HTTP API."""
        tls = ssl.create_default_context(cafile=server.cert("ca.pem"))
        c = http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=TIMEOUT_S)
        try:
            h = {"Content-Type": "application/json"}
            h.update(headers)
            c.request("POST", path, body=json.dumps(body), headers=h)
            r = c.getresponse()
            return r.status, r, json.loads(r.read() or b"null")
        finally:
            c.close()

    def post_relayed(self, server, port, path, body, headers):
        """post, again while the standby does not know the active replica
        yet (its first heartbeat): it says so, 503, never a silent failure."""
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            status, r, reply = self.post(server, port, path, body, headers)
            if status != 503 or time.monotonic() > deadline:
                return status, r, reply
            self.assertIn("standby", reply["message"])
            time.sleep(0.2)

    def test_standby_relays_http_calls(self):
        """A call made on the standby is relayed and audited by the active
        replica. A refusal on the standby first: it once took the audit id
        the active replica then gave the change, whose row was dropped; it
        is a line of the standby's log instead."""
        with self.two_replicas() as (active, _, standby, standby_port):
            status, _, body = self.post(standby, standby_port, SERVICE + "CreateJob",
                                        {"job": {"name": "relayed", "command": ["/bin/true"]}},
                                        {"Authorization": "Bearer " + VIEWER})
            self.assertEqual(status, 403, body)
            self.assertRegex(standby.log_text(), "refused on a replica that does not hold the "
                             "state .*CreateJob by token:http-viewer")
            status, _, body = self.post_relayed(
                standby, standby_port, SERVICE + "CreateJob",
                {"job": {"name": "relayed", "command": ["/bin/true"]}},
                {"Authorization": "Bearer " + ADMIN})
            self.assertEqual(status, 200, body)
            self.assertEqual(body["createdBy"], "token:http-admin via http-b")
            self.assertIn("relayed", self.audit_of(active))

    def test_session_made_on_one_replica_works_on_the_other(self):
        """A browser's session lives in the database: made on the active
        replica, its cookie works on the standby (and the other way round),
        with the token's role; a logout on one ends it on both."""
        with self.two_replicas() as (active, active_port, standby, standby_port):
            sessions = {}
            for name, (server, port) in (("a", (active, active_port)),
                                         ("b", (standby, standby_port))):
                status, r, _ = self.post_relayed(server, port, "/login", {"token": OPERATOR}, {})
                self.assertEqual(status, 200)
                sessions[name] = {"Cookie": r.getheader("Set-Cookie").split(";")[0]}
            for name, (server, port) in (("a", (standby, standby_port)),
                                         ("b", (active, active_port))):
                status, _, body = self.post_relayed(server, port, SERVICE + "ListJobs", {},
                                                    sessions[name])
                self.assertEqual(status, 200, body)
                status, _, body = self.post_relayed(server, port, SERVICE + "DeleteJob",
                                                    {"name": "x"}, sessions[name])
                self.assertEqual(status, 403, body)  # the operator's role, no more
            # Logged out on the active replica, ended on the standby too
            # (each replica trusts its cache for a second at most).
            status, _, _ = self.post(active, active_port, "/logout", {}, sessions["a"])
            self.assertEqual(status, 200)
            deadline = time.monotonic() + TIMEOUT_S
            while True:
                status, _, body = self.post(standby, standby_port, SERVICE + "ListJobs", {},
                                            sessions["a"])
                if status != 200 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            self.assertEqual(status, 401, body)
            self.assertIn("session has ended", body["message"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + test_interop.UNITTEST_ARGV, verbosity=2)
