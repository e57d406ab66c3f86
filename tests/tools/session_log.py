"""What the session captures of PROTOCOL.md share: a flipd of its own on
port 0 with a fresh store, and line connections that log what they send
('name > line') and receive ('name < line') in one interleaved log.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time


class Daemon:
    """The flipd binary at `binary` on 127.0.0.1:0, with a store of its own,
    so that games and challenges are numbered from 1."""

    def __init__(self, binary):
        self.store_dir = tempfile.mkdtemp(prefix="flipline-capture-")
        config = os.path.join(self.store_dir, "flipd.ron")
        with open(config, "w") as f:
            f.write('(store: (path: "%s"))\n' % os.path.join(self.store_dir, "flipline.db"))
        self.proc = subprocess.Popen(
            [binary, "--config", config, "--listen", "127.0.0.1:0"],
            stderr=subprocess.PIPE,
            env=dict(os.environ, NO_COLOR="1"),
            text=True,
        )
        self.port = None
        for log_line in self.proc.stderr:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log_line)
            if found:
                self.port = int(found.group(1))
                break
        self.log = []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        shutil.rmtree(self.store_dir, ignore_errors=True)


class Conn:
    def __init__(self, daemon, name):
        self.name = name
        self.log = daemon.log
        self.sock = socket.create_connection(("127.0.0.1", daemon.port))
        self.sock.settimeout(0.3)
        self.buf = b""
        self.seen = []  # every line received
        self.drain()

    def send(self, line):
        self.log.append(f"{self.name:<4}> {line}")
        self.sock.sendall((line + "\n").encode())

    def drain(self, quiet=0.15):
        """Logs every line that arrives until `quiet` seconds pass without one."""
        end = time.time() + quiet
        got = []
        while time.time() <= end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                self.log.append(f"{self.name:<4}< {line.decode()}")
                got.append(line.decode())
                self.seen.append(line.decode())
                end = time.time() + quiet
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                self.log.append(f"{self.name:<4}  (connection closed)")
                break
            self.buf += data
        return got


def step(conn, line, others=(), quiet=0.15):
    """Sends `line` on `conn`, then drains it and each of `others`."""
    conn.send(line)
    got = conn.drain(quiet)
    for other in others:
        other.drain(quiet / 3)
    return got


def slow(conn, line, others=()):
    """A step that waits longer for its lines (a random start is drawn, a
    game is stored first)."""
    return step(conn, line, others, quiet=0.3)
