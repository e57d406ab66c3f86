#!/usr/bin/env python3
"""Floods a real flipd the ways a hostile client would and reports the
daemon's resident memory before and at its peak during each flood, with what
the flood achieved.

Usage: python3 tests/tools/flood_rss.py target/release/flipd [FLOOD ...]
FLOOD: list, who, silent, register, guess (default: all), each against a
daemon of its own with the embedded defaults (only the port and the store
differ). Loopback only: the clients bind source addresses in 127.0.0.0/8 so
that "one address" and "many addresses" are what they say.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

BINARY = sys.argv[1]
FLOODS = sys.argv[2:] or ["list", "who", "silent", "register", "guess"]


class Daemon:
    """A flipd of its own on a free port, with a fresh store."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="flipline-flood-")
        config = os.path.join(self.dir, "flipd.ron")
        with open(config, "w") as f:
            f.write('(store: (path: "%s"))\n' % os.path.join(self.dir, "flipline.db"))
        self.proc = subprocess.Popen(
            [BINARY, "--config", config, "--listen", "127.0.0.1:0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = None
        for line in self.proc.stderr:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                break
        # Keep reading the log so that the daemon never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.send_signal(2)
        self.proc.wait(timeout=30)
        subprocess.run(["rm", "-rf", self.dir])


def connect(port, source="127.0.0.1", timeout=5.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


class Lines:
    """A connection read line by line, every read bounded."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def line(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def command(self, text):
        """Sends a command and returns its final line (OK or ERR)."""
        self.sock.sendall((text + "\n").encode())
        while True:
            line = self.line()
            if line is None or line.startswith(("OK", "ERR")):
                return line


def client(port, source, name=None):
    lines = Lines(connect(port, source))
    assert lines.line().startswith("HELLO")
    if name:
        reply = lines.command(f"LOGIN {name}")
        assert reply and reply.startswith("OK"), reply
    return lines


def spread(i):
    """The i-th of many source addresses: 127.0.1.1 on."""
    return f"127.0.{1 + i // 250}.{1 + i % 250}"


def peak_during(daemon, seconds, work):
    """Runs `work` in a thread while sampling the daemon's RSS every 20 ms for
    `seconds`; returns the peak in KiB and what `work` returned."""
    result = {}

    def run():
        try:
            result["value"] = work()
        except Exception as e:  # reported in the table rather than lost
            result["value"] = f"the flood failed: {e!r}"

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    peak, end = 0, time.time() + seconds
    while time.time() < end or thread.is_alive():
        peak = max(peak, daemon.rss_kib())
        time.sleep(0.02)
        if time.time() > end + 600:
            break
    return peak, result.get("value")


def never_reading(port, source, command, count):
    """A client that sends `count` commands and never reads; returns the
    socket (to see later whether the daemon closed it)."""
    sock = connect(port, source)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    payload = (command + "\n").encode() * count
    try:
        sock.sendall(payload)
    except OSError:
        pass
    return sock


def closed_by_daemon(sock, within=20.0):
    """Whether the daemon closed `sock` (reading what it queued, in bulk)."""
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(1 << 20)
            if not data:
                return True
    except socket.timeout:
        return False
    except OSError:
        # Reset: the daemon closed it with lines still unread.
        return True


def flood_lists(kind):
    daemon = Daemon()
    port = daemon.port
    holders = []
    for i in range(1000):
        c = client(port, spread(i), f"p{i}")
        if kind == "list":
            c.command("NEW othello")
        holders.append(c)
    time.sleep(0.5)
    before = daemon.rss_kib()
    command = "LIST" if kind == "list" else "WHO"

    def attack():
        socks = [never_reading(port, "127.0.0.5", command, 490) for _ in range(8)]
        # Held unread for a while, then read out: closed, or served whole.
        time.sleep(5)
        closed = [False] * len(socks)

        def check(i):
            closed[i] = closed_by_daemon(socks[i], within=5)

        checks = [threading.Thread(target=check, args=(i,)) for i in range(len(socks))]
        for t in checks:
            t.start()
        for t in checks:
            t.join()
        return sum(closed)

    peak, closed = peak_during(daemon, 10, attack)
    after = daemon.rss_kib()
    daemon.stop()
    return before, peak, after, f"{closed} of 8 non-reading clients disconnected"


def flood_silent():
    daemon = Daemon()
    port = daemon.port
    before = daemon.rss_kib()

    def attack():
        socks, refused = [], 0
        for _ in range(300):
            try:
                s = connect(port, "127.0.0.9")
                s.settimeout(2)
                greeting = s.recv(100)
                if greeting.startswith(b"ERR"):
                    refused += 1
                socks.append(s)
            except OSError:
                refused += 1
        other = client(port, "127.0.0.10")
        reply = other.command("LOGIN someone")
        return refused, reply, socks

    peak, (refused, reply, socks) = peak_during(daemon, 5, attack)
    after = daemon.rss_kib()
    daemon.stop()
    del socks
    outcome = f"{refused} of 300 refused; another address: {reply.split(' secret')[0]}"
    return before, peak, after, outcome


def log_in_once(port, source, line, timeout=5.0):
    """A new connection from `source` that sends `line`; its reply."""
    c = Lines(connect(port, source, timeout))
    c.line()
    reply = c.command(line)
    c.sock.close()
    return reply


def owner_logins(port, source, line, stop, waits):
    """The owner logging in from `source` every half second until `stop`,
    each wait for the answer added to `waits`."""
    while time.time() < stop:
        began = time.time()
        log_in_once(port, source, line, timeout=30)
        waits.append(time.time() - began)
        time.sleep(0.5)


def run_together(targets):
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def flood_with_owner(seconds, attackers, owner_line, owner_source):
    """Runs `attackers` (functions of the port and the end time, returning
    a count) beside the owner's logins; returns RSS figures, the summed
    count and the owner's worst wait."""
    daemon = Daemon()
    port = daemon.port
    log_in_once(port, owner_source, owner_line)
    before = daemon.rss_kib()
    stop = time.time() + seconds
    counts, waits = [], []
    targets = [lambda a=a: counts.append(a(port, stop)) for a in attackers]
    targets.append(lambda: owner_logins(port, owner_source, owner_line, stop, waits))
    peak, _ = peak_during(daemon, seconds, lambda: run_together(targets))
    after = daemon.rss_kib()
    daemon.stop()
    worst = max(waits) if waits else float("nan")
    return before, peak, after, sum(counts), worst


def registering(n):
    def attack(port, stop):
        registered, i = 0, 0
        while time.time() < stop:
            try:
                reply = log_in_once(port, "127.0.0.21", f"LOGIN r{n}x{i} pw{i}")
                registered += bool(reply and reply.startswith("OK"))
            except OSError:
                pass
            i += 1
        return registered

    return attack


def guessing(port, stop):
    wrong = 0
    try:
        c = Lines(connect(port, "127.0.0.31", timeout=30))
        c.line()
        while time.time() < stop:
            reply = c.command("LOGIN vic guess")
            if reply is None:
                break
            wrong += reply.startswith("ERR 401 wrong password")
    except OSError:
        pass
    return wrong


def flood_register():
    attackers = [registering(n) for n in range(100)]
    before, peak, after, registered, worst = flood_with_owner(
        12, attackers, "LOGIN owner owner-password", "127.0.0.22"
    )
    outcome = f"{registered} names registered in 12 s; the owner's LOGIN took at most {worst:.2f} s"
    return before, peak, after, outcome


def flood_guess():
    before, peak, after, wrong, worst = flood_with_owner(
        15, [guessing] * 40, "LOGIN vic right-password", "127.0.0.32"
    )
    outcome = (
        f"{wrong} wrong guesses answered in 15 s by 40 connections; "
        f"the owner's LOGIN took at most {worst:.2f} s"
    )
    return before, peak, after, outcome


RUNS = {
    "list": lambda: flood_lists("list"),
    "who": lambda: flood_lists("who"),
    "silent": flood_silent,
    "register": flood_register,
    "guess": flood_guess,
}

print("| flood | RSS before | peak during | after | outcome |")
print("|---|---|---|---|---|")
for flood in FLOODS:
    before, peak, after, outcome = RUNS[flood]()
    mib = lambda kib: f"{kib / 1024:.1f} MiB"
    print(f"| {flood} | {mib(before)} | {mib(peak)} | {mib(after)} | {outcome} |", flush=True)
