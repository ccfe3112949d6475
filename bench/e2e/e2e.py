#!/usr/bin/env python3
"""The whole system end to end: cmd/local-apiserver and cmd/controller-manager
as processes, N Nginx custom resources created at once, timed until every one
reports status.readyReplicas 1 (run.sh builds the binaries and calls this).

Per size it prints what it measures as it goes (stderr) and ends with one
line per figure on stdout:

    <figure> <size>: kcr <value> <unit>

A size that does not converge within its timeout ends with
`converge <size>: kcr timeout after <s> s (<ready>/<n> ready)` and the run
goes on with the other figures of that size.

Soak mode (--soak SECONDS): 300 Nginx and 300 ConfigMaps, then patches at
--soak-rate per second in total (half to each kind) for SECONDS; both
processes' RSS every 15 s and at the end, and whether it is flat after the
warm-up (the last third's peak within 10 % of the RSS at the end of the
warm-up).

Only the standard library: the creates go over raw keep-alive HTTP/1.1
connections driven by one thread (create_all), the rest over http.client.
"""

import argparse
import http.client
import json
import os
import re
import selectors
import socket
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

CLK_TCK = os.sysconf("SC_CLK_TCK")
NGINX_PATH = "/apis/example.org/v1/namespaces/default/nginxes"
CONFIGMAP_PATH = "/api/v1/namespaces/default/configmaps"
READY = re.compile(rb'"readyReplicas"\s*:\s*1\b')


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def size_label(n):
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


# --- /proc ----------------------------------------------------------------

def proc_status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_mib(pid):
    return proc_status_kib(pid, "VmRSS") / 1024


def peak_rss_mib(pid):
    return proc_status_kib(pid, "VmHWM") / 1024


def own_cpu_seconds():
    """utime + stime of this process (the harness: every thread), in
    seconds."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_seconds(pid):
    """utime + stime of the process (all its threads), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0.0
    # The command name may hold spaces: fields start after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


# --- processes --------------------------------------------------------------

class Process:
    """A child whose stdout and stderr go to files under the work dir."""

    def __init__(self, name, argv, work, env=None):
        self.name = name
        self.out_path = os.path.join(work, f"{name}.out")
        self.err_path = os.path.join(work, f"{name}.log")
        self.out = open(self.out_path, "wb")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=self.err,
                                     env=env)
        self.pid = self.proc.pid

    def wait_for_line(self, prefix, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.out_path, "rb") as f:
                for line in f.read().decode(errors="replace").splitlines():
                    if line.startswith(prefix):
                        return line[len(prefix):].strip()
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        with open(self.err_path, "rb") as f:
            sys.stderr.write(f.read().decode(errors="replace")[-4000:])
        raise RuntimeError(f"{self.name} printed no '{prefix}' line")

    def terminate_timed(self, timeout=30):
        """SIGTERM, then the seconds until the process has exited."""
        if self.proc.poll() is not None:
            return float("nan")
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - start

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --- HTTP -----------------------------------------------------------------

class Client:
    """One keep-alive connection to the server."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.conn = None

    def request(self, method, path, body=None, content_type="application/json"):
        for attempt in range(5):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=120)
            try:
                headers = {"Accept": "application/json"}
                if body is not None:
                    headers["Content-Type"] = content_type
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.status == 429 or resp.status >= 500:
                    time.sleep(0.1 * (attempt + 1))
                    continue
                return resp.status, data
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                time.sleep(0.1 * (attempt + 1))
        raise RuntimeError(f"{method} {path}: no answer after 5 tries")


class _Post:
    """One POST on a creator's connection: the request's bytes, and what
    has come back of its answer."""

    __slots__ = ("index", "request", "tries", "answer")

    def __init__(self, index, request):
        self.index = index
        self.request = request
        self.tries = 0
        self.answer = b""


def _parse_head(head):
    """The status and the headers (lower-cased names and values) of an
    HTTP/1.1 answer's head, without its closing blank line."""
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    return int(lines[0].split(" ", 2)[1]), headers


def _answer_length(answer):
    """The length of the whole HTTP/1.1 answer at the start of `answer`
    (head and body), or None while it is incomplete; with its status and
    whether the server will close the connection."""
    head_end = answer.find(b"\r\n\r\n")
    if head_end < 0:
        return None, 0, False
    status, headers = _parse_head(answer[:head_end])
    length = int(headers.get("content-length", "0"))
    chunked = "chunked" in headers.get("transfer-encoding", "")
    close = headers.get("connection") == "close"
    body = head_end + 4
    if not chunked:
        end = body + length
        return (end if len(answer) >= end else None), status, close
    while True:  # chunked: sizes in hex, a zero-size chunk ends it
        line_end = answer.find(b"\r\n", body)
        if line_end < 0:
            return None, status, close
        size = int(answer[body:line_end].split(b";")[0], 16)
        if size == 0:
            end = answer.find(b"\r\n\r\n", line_end)  # after any trailers
            return (end + 4 if end >= 0 else None), status, close
        body = line_end + 2 + size + 2
        if len(answer) < body:
            return None, status, close


def create_all(url, path, bodies, connections):
    """POSTs every body (bytes or str, JSON) over `connections` keep-alive
    HTTP/1.1 connections, each with one request in flight at a time, as
    that many clients would; returns the seconds.

    One thread drives every connection (selectors), with each request's
    bytes built before the clock starts: the harness shares the two cores
    with what it measures, and Python threads with http.client spent more
    CPU on the GIL and header handling than the server on the writes.
    A 429 or 5xx answer, or a connection that fails, sends that body again
    (at most 5 tries each, as Client.request); anything but 200, 201 or
    409 is an error."""
    u = urllib.parse.urlparse(url)
    host = f"{u.hostname}:{u.port}"
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
            "Accept: application/json\r\nContent-Type: application/json\r\n"
            "Content-Length: ").encode()
    todo = []
    for i, body in enumerate(bodies):
        if isinstance(body, str):
            body = body.encode()
        todo.append(_Post(i, b"%s%d\r\n\r\n%s" % (head, len(body), body)))
    todo.reverse()  # popped from the end: sent in order
    sel = selectors.DefaultSelector()

    def connect():
        # With a timeout (not non-blocking): sendall waits for room as it
        # should, and a recv on a socket the selector found readable
        # returns at once.
        sock = socket.create_connection((u.hostname, u.port), timeout=120)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def send_next(sock):
        if not todo:
            sel.unregister(sock)
            sock.close()
            return
        post = todo.pop()
        post.answer = b""
        post.tries += 1
        sel.modify(sock, selectors.EVENT_READ, post)
        try:
            sock.sendall(post.request)
        except OSError as e:
            reopen(sock, post, f"sending: {e}")

    def retry(post, why):
        if post.tries >= 5:
            raise RuntimeError(f"POST {path}: no answer after 5 tries ({why})")
        todo.append(post)

    def reopen(sock, post, why):
        """The connection broke: the request goes again on a new one."""
        sel.unregister(sock)
        sock.close()
        retry(post, why)
        time.sleep(0.1 * post.tries)
        sock = connect()
        sel.register(sock, selectors.EVENT_READ, None)
        send_next(sock)

    start = time.monotonic()
    for _ in range(min(connections, len(todo))):
        sock = connect()
        sel.register(sock, selectors.EVENT_READ, None)
        send_next(sock)
    while sel.get_map():
        for key, _ in sel.select():
            sock, post = key.fileobj, key.data
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:  # closed: send the request again on a new one
                reopen(sock, post, "connection closed")
                continue
            post.answer += data
            end, status, close = _answer_length(post.answer)
            if end is None:
                continue
            if status == 429 or status >= 500:
                time.sleep(0.1 * post.tries)
                retry(post, f"status {status}")
            elif status not in (200, 201, 409):
                raise RuntimeError(
                    f"POST {path}: {status} {post.answer[:300]!r}")
            if close:
                sel.unregister(sock)
                sock.close()
                sock = connect()
                sel.register(sock, selectors.EVENT_READ, None)
            send_next(sock)
    sel.close()
    return time.monotonic() - start


def nginx_body(name, replicas=1):
    return json.dumps({"apiVersion": "example.org/v1", "kind": "Nginx",
                       "metadata": {"name": name, "namespace": "default"},
                       "spec": {"replicas": replicas}})


def configmap_body(name):
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "default"},
                       "data": {"value": "0"}})


def count_ready(client):
    status, data = client.request("GET", NGINX_PATH)
    if status != 200:
        raise RuntimeError(f"LIST nginxes: {status} {data[:300]!r}")
    return len(READY.findall(data))


# A watch event of an Nginx as the server writes it, and the fields the
# watcher needs from it. Lines of any other shape are parsed whole.
EVENT_HEAD = re.compile(rb'\{"type":"(ADDED|MODIFIED|DELETED)","object":')
EVENT_NAME = re.compile(rb'"metadata":\{[^{}]*?"name":"([^"\\]*)"')


class ReadyWatcher:
    """Counts the Nginx that report readyReplicas 1, from a watch, as
    `kubectl wait` would: one LIST, then a WATCH from its resourceVersion
    (again after a LIST if the server ends the watch). Cheaper for both
    sides than listing every object twice a second, so the harness takes
    less of the two cores it shares with what it measures.

    The watch is read in blocks and each event checked for the fields the
    count needs (its type, name and status.readyReplicas), without
    decoding the whole object; an event of any other shape (an ERROR, a
    BOOKMARK, a name after a nested object) is decoded whole. The waiting
    thread is woken when the count reaches what it waits for, not on every
    event."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.lock = threading.Lock()
        self.ready = set()
        self.requests = 0
        self.error = None
        self.stopped = False
        self.target = None  # the count wait() waits for
        self.changed = threading.Condition(self.lock)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.rv = self._list()
        self.thread.start()

    def count(self):
        with self.lock:
            return len(self.ready)

    def wait(self, n, timeout):
        """Waits until `n` are ready or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self.lock:
            self.target = n
            while len(self.ready) < n and self.error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.changed.wait(min(left, 5.0))
            self.target = None
            if self.error is not None:
                raise RuntimeError(self.error)
            return len(self.ready)

    def stop(self):
        self.stopped = True

    def _notify_locked(self):
        if self.target is not None and len(self.ready) >= self.target:
            self.changed.notify_all()

    def _list(self):
        client = Client(f"http://{self.host}:{self.port}")
        status, data = client.request("GET", NGINX_PATH)
        if status != 200:
            raise RuntimeError(f"LIST nginxes: {status} {data[:300]!r}")
        body = json.loads(data)
        with self.lock:
            self.requests += 1
            self.ready = {o["metadata"]["name"] for o in body.get("items", [])
                          if self._is_ready(o)}
            self._notify_locked()
        return body["metadata"]["resourceVersion"]

    @staticmethod
    def _is_ready(obj):
        return (obj.get("status") or {}).get("readyReplicas") == 1

    def _event(self, line):
        """Applies one watch event; returns 'gone' when the server ended
        the watch with 410, else None."""
        head = EVENT_HEAD.match(line)
        name = EVENT_NAME.search(line) if head else None
        if name is not None:
            deleted = head.group(1) == b"DELETED"
            ready = not deleted and READY.search(line) is not None
            name = name.group(1).decode()
        else:
            event = json.loads(line)
            obj = event.get("object", {})
            if event.get("type") == "ERROR":
                if obj.get("code") == 410:
                    return "gone"
                raise RuntimeError(f"WATCH nginxes: {obj}")
            if event.get("type") == "BOOKMARK":
                return None
            name = obj["metadata"]["name"]
            ready = event["type"] != "DELETED" and self._is_ready(obj)
        with self.lock:
            if ready:
                self.ready.add(name)
            else:
                self.ready.discard(name)
            self._notify_locked()
        return None

    def _watch(self, rv):
        """One WATCH from `rv`: yields the body as it arrives, in blocks of
        whole chunks (each recv's worth), until the server ends it."""
        sock = socket.create_connection((self.host, self.port), timeout=3600)
        try:
            sock.sendall((f"GET {NGINX_PATH}?watch=1&resourceVersion={rv} "
                          f"HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                          "Accept: application/json\r\n\r\n").encode())
            buf = b""
            while b"\r\n\r\n" not in buf:
                more = sock.recv(65536)
                if not more:
                    raise RuntimeError("WATCH nginxes: closed before the answer")
                buf += more
            head, _, buf = buf.partition(b"\r\n\r\n")
            status, headers = _parse_head(head)
            with self.lock:
                self.requests += 1
            if status != 200:
                raise RuntimeError(f"WATCH nginxes: {status}")
            if "chunked" not in headers.get("transfer-encoding", ""):
                raise RuntimeError("WATCH nginxes: not a chunked answer")
            # Chunked framing, decoded a recv at a time: every whole chunk
            # in the buffer at once.
            pos = 0
            while True:
                out = []
                while True:
                    eol = buf.find(b"\r\n", pos)
                    if eol < 0:
                        break
                    size = int(buf[pos:eol].split(b";")[0], 16)
                    if size == 0:
                        if out:
                            yield b"".join(out)
                        return
                    end = eol + 2 + size
                    if len(buf) < end + 2:
                        break
                    out.append(buf[eol + 2:end])
                    pos = end + 2
                if out:
                    yield b"".join(out)
                if self.stopped:
                    return
                more = sock.recv(262144)
                if not more:
                    return  # cut: the caller LISTs and watches again
                buf = buf[pos:] + more
                pos = 0
        finally:
            sock.close()

    def _run(self):
        rv = self.rv
        try:
            while not self.stopped:
                gone = False
                rest = b""
                for block in self._watch(rv):
                    lines = (rest + block).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        if self._event(line) == "gone":
                            gone = True
                            break
                    if gone or self.stopped:
                        break
                # Ended by the server (410 or closed): LIST again, then
                # watch from there.
                if not self.stopped:
                    rv = self._list()
        except Exception as e:  # reported to the waiting thread
            with self.lock:
                self.error = f"watching nginxes: {e}"
                self.changed.notify_all()


SETTLE_QUIET_S = 3.0


def wait_settled(url, limit_s=60.0):
    """Waits until the server's resourceVersion (one sequence for every
    collection) has not moved for SETTLE_QUIET_S; returns the seconds
    waited, at most `limit_s`."""
    client = Client(url)
    start = time.monotonic()
    last, since = None, start
    while time.monotonic() - start < limit_s:
        status, data = client.request("GET", NGINX_PATH + "?limit=1")
        if status != 200:
            raise RuntimeError(f"LIST nginxes: {status} {data[:300]!r}")
        rv = json.loads(data)["metadata"]["resourceVersion"]
        now = time.monotonic()
        if rv != last:
            last, since = rv, now
        elif now - since >= SETTLE_QUIET_S:
            break
        time.sleep(0.5)
    return time.monotonic() - start


def scrape(url, names):
    """Sum of each metric of `names` over its label sets, from /metrics."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    sums = {n: 0.0 for n in names}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in sums:
            sums[name] += float(line.rsplit(" ", 1)[1])
    return sums


def count_lines(path, needle):
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if needle in line:
                n += 1
    return n


# --- the system -----------------------------------------------------------

class System:
    """The server and the manager, started; `stop()` times their SIGTERMs."""

    def __init__(self, args, work, event_ttl):
        self.work = work
        kubeconfig = os.path.join(work, "kubeconfig")
        env = dict(os.environ)
        env.setdefault("MALLOC_ARENA_MAX", args.malloc_arena_max)
        server_argv = [args.server, "--port=0", f"--kubeconfig-out={kubeconfig}",
                       # Each request as a log line (handler.cc's VLOG(2)):
                       # the server's request count.
                       "--vmodule=handler=2"]
        if event_ttl:
            server_argv.append(f"--event-ttl={event_ttl}")
        self.server = Process("server", server_argv, work, env)
        # The server's first line on stdout is its URL.
        self.url = self.server.wait_for_line("")
        log(f"server pid={self.server.pid} url={self.url}")
        subprocess.run([args.kubectl, f"--kubeconfig={kubeconfig}", "apply",
                        "-f", args.crd], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([args.kubectl, f"--kubeconfig={kubeconfig}", "wait",
                        "--for=condition=Established", "--timeout=60s",
                        "crd/nginxes.example.org"], check=True,
                       stdout=subprocess.DEVNULL)
        self.manager = Process("manager", [
            args.manager, f"--kubeconfig={kubeconfig}", "--controllers=nginx",
            f"--workers={args.workers}", f"--qps={args.qps}",
            f"--burst={args.burst}", "--metrics-bind-address=127.0.0.1:0",
            "--health-probe-bind-address=0"], work, env)
        metrics = self.manager.wait_for_line("metrics: ")
        self.metrics_url = metrics[:metrics.index("/metrics")]
        log(f"manager pid={self.manager.pid} metrics={self.metrics_url}")

    def server_requests(self):
        return count_lines(self.server.err_path, b"request method=")

    def stop(self):
        """SIGTERM to the manager, then the server: seconds each took."""
        manager = self.manager.terminate_timed()
        server = self.server.terminate_timed()
        return manager, server

    def kill(self):
        self.manager.kill()
        self.server.kill()


def run_size(args, n):
    label = size_label(n)
    timeout = args.timeout if args.timeout > 0 else 30 + 0.03 * n
    work = os.path.join(args.work, f"n{n}")
    os.makedirs(work, exist_ok=True)
    log(f"== {n} Nginx (timeout {timeout:.0f} s)")
    system = System(args, work, args.event_ttl)
    figures = []
    try:
        base_requests = system.server_requests()
        harness_start = own_cpu_seconds()
        bodies = [nginx_body(f"bench-{i}") for i in range(n)]
        start = time.monotonic()
        create_s = create_all(system.url, NGINX_PATH, bodies, args.connections)
        log(f"created {n} in {create_s:.2f} s ({n / create_s:.0f}/s, harness "
            f"cpu {own_cpu_seconds() - harness_start:.1f} s)")
        watcher = ReadyWatcher(system.url)
        watcher.start()
        ready = 0
        converged = None
        while True:
            t = time.monotonic()
            ready = watcher.wait(n, min(5.0, max(0.0, start + timeout - t)))
            now = time.monotonic()
            if ready >= n:
                converged = now - start
                break
            if now - start > timeout:
                break
            log(f"  {now - start:6.1f} s: {ready}/{n} ready; manager rss "
                f"{rss_mib(system.manager.pid):.0f} MiB, server rss "
                f"{rss_mib(system.server.pid):.0f} MiB")
        harness_cpu = own_cpu_seconds() - harness_start
        watcher.stop()
        polls = watcher.requests
        if converged is not None:
            log(f"converged in {converged:.2f} s ({polls} list/watch requests)")
            figures.append((f"converge {label}", f"{converged:.1f}", "s"))
        else:
            figures.append((f"converge {label}",
                            f"timeout after {timeout:.0f} s ({ready}/{n} ready)",
                            ""))
        figures.append((f"create {label}", f"{create_s:.1f}", "s"))
        manager_cpu = cpu_seconds(system.manager.pid)
        server_cpu = cpu_seconds(system.server.pid)
        metrics = scrape(system.metrics_url, ["controller_runtime_reconcile_total",
                                              "rest_client_requests_total"])
        # The server's requests while converging, less the harness's own
        # (the creates and the polls).
        server_requests = system.server_requests() - base_requests - n - polls
        # Idle: once the writes that trail convergence (the last status
        # updates and Events) have stopped, the harness sends nothing.
        settled_s = wait_settled(system.url)
        log(f"no writes for {SETTLE_QUIET_S:.0f} s, {settled_s:.1f} s after "
            f"convergence")
        settle = time.monotonic()
        idle_start = cpu_seconds(system.server.pid)
        manager_idle_start = cpu_seconds(system.manager.pid)
        if args.profile_idle:
            # perf's own start-up falls inside the window: a little CPU of
            # perf's, none of the server's.
            data = os.path.join(work, "server-idle.perf.data")
            subprocess.run(["perf", "record", "-q", "-F", "499", "-g", "-p",
                            str(system.server.pid), "-o", data, "--", "sleep",
                            str(args.idle_seconds)], check=False)
            log(f"idle profile: perf report -i {data}")
        else:
            time.sleep(args.idle_seconds)
        idle = (cpu_seconds(system.server.pid) - idle_start) / (
            time.monotonic() - settle) * 100
        manager_idle = (cpu_seconds(system.manager.pid) - manager_idle_start) / (
            time.monotonic() - settle) * 100
        manager_peak = peak_rss_mib(system.manager.pid)
        server_peak = peak_rss_mib(system.server.pid)
        figures += [
            (f"manager peak rss {label}", f"{manager_peak:.0f}", "MiB"),
            (f"server peak rss {label}", f"{server_peak:.0f}", "MiB"),
            (f"manager cpu {label}", f"{manager_cpu:.1f}", "s"),
            (f"server cpu {label}", f"{server_cpu:.1f}", "s"),
            (f"harness cpu {label}", f"{harness_cpu:.1f}", "s"),
            (f"reconciles/object {label}",
             f"{metrics['controller_runtime_reconcile_total'] / n:.2f}", ""),
            (f"manager requests/object {label}",
             f"{metrics['rest_client_requests_total'] / n:.2f}", ""),
            (f"server requests/object {label}", f"{server_requests / n:.2f}", ""),
            (f"server idle cpu {label}", f"{idle:.1f}", "%"),
            (f"manager idle cpu {label}", f"{manager_idle:.1f}", "%"),
        ]
        manager_term, server_term = system.stop()
        figures += [
            (f"manager sigterm {label}", f"{manager_term:.2f}", "s"),
            (f"server sigterm {label}", f"{server_term:.2f}", "s"),
        ]
    finally:
        system.kill()
    for f in figures:
        log(f"  {f[0]}: {f[1]} {f[2]}")
    return figures


def run_soak(args):
    work = os.path.join(args.work, "soak")
    os.makedirs(work, exist_ok=True)
    n = 300
    log(f"== soak: {n} Nginx + {n} ConfigMaps, {args.soak_rate:.0f} patches/s "
        f"for {args.soak:.0f} s, event TTL {args.event_ttl or 'default'}")
    system = System(args, work, args.event_ttl)
    samples = []  # (seconds, manager MiB, server MiB)
    figures = []
    try:
        create_all(system.url, NGINX_PATH,
                   [nginx_body(f"soak-{i}") for i in range(n)], args.connections)
        create_all(system.url, CONFIGMAP_PATH,
                   [configmap_body(f"soak-{i}") for i in range(n)], args.connections)
        poller = Client(system.url)
        deadline = time.monotonic() + 30 + 0.03 * n * 10
        while count_ready(poller) < n and time.monotonic() < deadline:
            time.sleep(0.5)
        log(f"soak objects ready; patching")
        stop = threading.Event()
        sent = [0, 0]
        lock = threading.Lock()

        def patcher(index, threads):
            # Each thread its share of the rate, paced by the clock.
            client = Client(system.url)
            per_thread = args.soak_rate / threads
            k = 0
            t0 = time.monotonic()
            i = index
            while not stop.is_set():
                name = f"soak-{i % n}"
                if k % 2 == 0:
                    if args.soak_nginx_patch == "replicas":
                        spec = {"spec": {"replicas": 1 + (i // n) % 2}}
                    else:
                        spec = {"metadata": {"annotations": {"soak": str(k)}}}
                    status, _ = client.request(
                        "PATCH", f"{NGINX_PATH}/{name}", json.dumps(spec),
                        "application/merge-patch+json")
                else:
                    status, _ = client.request(
                        "PATCH", f"{CONFIGMAP_PATH}/{name}",
                        json.dumps({"data": {"value": str(k)}}),
                        "application/merge-patch+json")
                with lock:
                    sent[0 if status == 200 else 1] += 1
                k += 1
                i += threads
                wait = t0 + k / per_thread - time.monotonic()
                if wait > 0:
                    stop.wait(wait)

        threads = [threading.Thread(target=patcher, args=(j, 8)) for j in range(8)]
        start = time.monotonic()
        for t in threads:
            t.start()
        next_sample = start
        while True:
            now = time.monotonic()
            if now >= next_sample:
                s = (now - start, rss_mib(system.manager.pid),
                     rss_mib(system.server.pid))
                samples.append(s)
                with lock:
                    done = sent[0] + sent[1]
                log(f"  {s[0]:5.0f} s: manager rss {s[1]:.1f} MiB, server rss "
                    f"{s[2]:.1f} MiB ({done / max(s[0], 1):.0f} patches/s)")
                next_sample += 15
            if now - start >= args.soak:
                break
            time.sleep(min(1.0, max(0.0, next_sample - time.monotonic())))
        stop.set()
        for t in threads:
            t.join()
        end = (time.monotonic() - start, rss_mib(system.manager.pid),
               rss_mib(system.server.pid))
        samples.append(end)
        log(f"  {end[0]:5.0f} s (end): manager rss {end[1]:.1f} MiB, server rss "
            f"{end[2]:.1f} MiB; {sent[0]} patches ok, {sent[1]} failed")
        warmup = args.soak_warmup if args.soak_warmup > 0 else args.soak / 3
        for idx, who in ((1, "manager"), (2, "server")):
            at_warmup = [s for s in samples if s[0] <= warmup + 1e-6][-1][idx]
            last_third = [s[idx] for s in samples if s[0] >= 2 * args.soak / 3]
            peak = max(last_third)
            flat = peak <= at_warmup * 1.10
            figures.append((f"soak {who} rss end", f"{end[idx]:.0f}", "MiB"))
            figures.append((f"soak {who} rss flat",
                            f"{'yes' if flat else 'no'} ({at_warmup:.0f} MiB "
                            f"after {warmup:.0f} s warm-up, last-third peak "
                            f"{peak:.0f} MiB)", ""))
        # What the store holds at the end: Events grow without a TTL.
        for kind, path in (("events", "/api/v1/events"), ("pods", "/api/v1/pods")):
            status, data = poller.request("GET", path)
            count = data.count(b'"uid"') if status == 200 else -1
            figures.append((f"soak {kind} stored at the end", f"{count}", ""))
        figures.append(("soak patches/s",
                        f"{(sent[0] + sent[1]) / args.soak:.0f}", ""))
        manager_term, server_term = system.stop()
        figures += [("soak manager sigterm", f"{manager_term:.2f}", "s"),
                    ("soak server sigterm", f"{server_term:.2f}", "s")]
    finally:
        system.kill()
    with open(os.path.join(args.work, "soak_samples.json"), "w") as f:
        json.dump(samples, f)
    return figures


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True)
    p.add_argument("--manager", required=True)
    p.add_argument("--crd", required=True)
    p.add_argument("--kubectl", default="kubectl")
    p.add_argument("--work", required=True)
    p.add_argument("--sizes", default="1000 10000 50000")
    p.add_argument("--timeout", type=float, default=0,
                   help="seconds per size (0: 30 + 0.03 per object)")
    p.add_argument("--connections", "--threads", type=int, default=16,
                   help="keep-alive connections the creates are sent over")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--qps", default="5000")
    p.add_argument("--burst", default="10000")
    p.add_argument("--idle-seconds", type=float, default=10)
    p.add_argument("--profile-idle", action="store_true",
                   help="perf record the server while it is idle")
    p.add_argument("--event-ttl", default="")
    p.add_argument("--malloc-arena-max", default="1")
    p.add_argument("--soak", type=float, default=0,
                   help="soak for this many seconds instead of the sizes")
    p.add_argument("--soak-rate", type=float, default=160)
    p.add_argument("--soak-warmup", type=float, default=0,
                   help="seconds of warm-up (0: a third of the soak)")
    p.add_argument("--soak-nginx-patch", choices=["replicas", "annotation"],
                   default="replicas")
    args = p.parse_args()

    figures = []
    load_start = open("/proc/loadavg").read().split()[:3]
    if args.soak > 0:
        figures = run_soak(args)
    else:
        for n in [int(s) for s in args.sizes.split()]:
            figures += run_size(args, n)
    load_end = open("/proc/loadavg").read().split()[:3]
    print(f"\nload average {' '.join(load_start)} at the start, "
          f"{' '.join(load_end)} at the end")
    for name, value, unit in figures:
        print(f"{name}: kcr {value}{' ' + unit if unit else ''}")


if __name__ == "__main__":
    main()
