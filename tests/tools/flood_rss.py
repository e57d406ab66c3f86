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


def flood_register():
    daemon = Daemon()
    port = daemon.port
    probe = Lines(connect(port, "127.0.0.20"))
    probe.line()
    probe.command("LOGIN owner owner-password")
    probe.sock.close()
    before = daemon.rss_kib()
    registered, owner_waits = [0], []
    stop = time.time() + 12

    def one_attacker(n):
        i = 0
        while time.time() < stop:
            try:
                c = Lines(connect(port, "127.0.0.21"))
                c.line()
                reply = c.command(f"LOGIN r{n}x{i} pw{i}")
                if reply and reply.startswith("OK"):
                    registered[0] += 1
                c.sock.close()
            except OSError:
                pass
            i += 1

    def owner():
        while time.time() < stop:
            c = Lines(connect(port, "127.0.0.22"))
            c.line()
            began = time.time()
            c.command("LOGIN owner owner-password")
            owner_waits.append(time.time() - began)
            c.sock.close()
            time.sleep(0.5)

    def attack():
        threads = [threading.Thread(target=one_attacker, args=(n,)) for n in range(100)]
        threads.append(threading.Thread(target=owner))
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    peak, _ = peak_during(daemon, 12, attack)
    after = daemon.rss_kib()
    daemon.stop()
    worst = max(owner_waits) if owner_waits else float("nan")
    outcome = f"{registered[0]} names registered in 12 s; the owner's LOGIN took at most {worst:.2f} s"
    return before, peak, after, outcome


def flood_guess():
    daemon = Daemon()
    port = daemon.port
    owner = Lines(connect(port, "127.0.0.30"))
    owner.line()
    owner.command("LOGIN vic right-password")
    owner.sock.close()
    before = daemon.rss_kib()
    wrong, owner_waits = [0], []
    stop = time.time() + 15

    def guesser():
        try:
            c = Lines(connect(port, "127.0.0.31", timeout=30))
            c.line()
            while time.time() < stop:
                reply = c.command("LOGIN vic guess")
                if reply is None:
                    return
                if reply.startswith("ERR 401 wrong password"):
                    wrong[0] += 1
        except OSError:
            pass

    def owner_logins():
        while time.time() < stop:
            c = Lines(connect(port, "127.0.0.32", timeout=30))
            c.line()
            began = time.time()
            c.command("LOGIN vic right-password")
            owner_waits.append(time.time() - began)
            c.sock.close()
            time.sleep(0.5)

    def attack():
        threads = [threading.Thread(target=guesser) for _ in range(40)]
        threads.append(threading.Thread(target=owner_logins))
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    peak, _ = peak_during(daemon, 15, attack)
    after = daemon.rss_kib()
    daemon.stop()
    worst = max(owner_waits) if owner_waits else float("nan")
    outcome = f"{wrong[0]} wrong guesses answered in 15 s by 40 connections; the owner's LOGIN took at most {worst:.2f} s"
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
