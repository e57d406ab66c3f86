#!/usr/bin/env python3
"""Captures the example session of PROTOCOL.md from a real flipd.

Usage: python3 tests/tools/capture_session.py target/debug/flipd

Starts the daemon on port 0, drives three connections (ann and bob seek and
play, eve watches), and prints one interleaved log: 'name > line' for a line a
client sends, 'name < line' for a line it receives. Colours are drawn at random
by the daemon, so the moves are made by whoever is black or white.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1]
# A store of its own, so that the games are numbered from 1.
store_dir = tempfile.mkdtemp(prefix="flipline-capture-")
config = os.path.join(store_dir, "flipd.ron")
with open(config, "w") as f:
    f.write('(store: (path: "%s"))\n' % os.path.join(store_dir, "flipline.db"))
proc = subprocess.Popen(
    [binary, "--config", config, "--listen", "127.0.0.1:0"],
    stderr=subprocess.PIPE,
    env=dict(os.environ, NO_COLOR="1"),
    text=True,
)
port = None
for log_line in proc.stderr:
    found = re.search(r"listening on 127\.0\.0\.1:(\d+)", log_line)
    if found:
        port = int(found.group(1))
        break
log = []


class Conn:
    def __init__(self, name):
        self.name = name
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.settimeout(0.3)
        self.buf = b""
        self.drain()

    def send(self, line):
        log.append(f"{self.name:<4}> {line}")
        self.sock.sendall((line + "\n").encode())

    def drain(self, quiet=0.15):
        """Logs every line that arrives until `quiet` seconds pass without one."""
        end = time.time() + quiet
        got = []
        while time.time() <= end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                log.append(f"{self.name:<4}< {line.decode()}")
                got.append(line.decode())
                end = time.time() + quiet
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                log.append(f"{self.name:<4}  (connection closed)")
                break
            self.buf += data
        return got


def step(conn, line, others=()):
    conn.send(line)
    got = conn.drain()
    for other in others:
        other.drain(0.05)
    return got


ann, bob = Conn("ann"), Conn("bob")
step(ann, "LOGIN ann")
step(ann, "SEEK othello")
step(bob, "LOGIN bob")
start = next(l for l in step(bob, "SEEK othello", [ann]) if l.startswith("START"))
_, game, _, black, white, _ = start.split()
X, O = {"ann": ann, "bob": bob}[black], {"ann": ann, "bob": bob}[white]
eve = Conn("eve")
everyone = [ann, bob, eve]
step(eve, f"WATCH {game}")
for mover, square in [(X, "f5"), (O, "d6"), (X, "c3")]:
    step(mover, f"MOVE {square}", [c for c in everyone if c is not mover])
step(X, "MOVE d3")
step(O, "MOVE a1")
step(O, "MOVE d3", everyone)
step(X, "MOVE c4", everyone)
step(X, "SAY nice tiger", everyone)
step(eve, "LIST")
step(eve, "WHO")
step(O, "END", everyone)
for conn in everyone:
    step(conn, "QUIT")
proc.terminate()
proc.wait(5)
shutil.rmtree(store_dir, ignore_errors=True)
print("\n".join(log))
