#!/usr/bin/env python3
"""Captures PROTOCOL.md's session of challenges and ratings from a real flipd.

Usage: python3 tests/tools/capture_bots_session.py target/debug/flipd

Starts the daemon on port 0 with a store of its own and drives two
registered names: zed marks itself a program, ann challenges zed, who
declines, then to a rated game from a random start, which zed accepts and
resigns; both hear RATED; ann asks for ratings and the top list, and WHO.
Prints one interleaved log: 'name > line' sent, 'name < line' received.
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
store_dir = tempfile.mkdtemp(prefix="flipline-capture-")
config = os.path.join(store_dir, "flipd.ron")
with open(config, "w") as f:
    f.write('(store: (path: "%s"))\n' % os.path.join(store_dir, "flipline.db"))
proc = subprocess.Popen(
    [binary, "--config", config, "--listen", "127.0.0.1:0"],
    stderr=subprocess.PIPE,
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

    def drain(self, quiet=0.3):
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
                break
            self.buf += data
        return got


def step(conn, line, others=()):
    conn.send(line)
    got = conn.drain()
    for other in others:
        other.drain(0.1)
    return got


ann, zed = Conn("ann"), Conn("zed")
step(ann, "LOGIN ann tiger-ann")
step(zed, "LOGIN zed tiger-zed")
step(zed, "ACCOUNT bot")
got = step(ann, "CHALLENGE zed othello clock 5+3", [zed])
first = got[-1].split()[1]
step(zed, f"DECLINE {first} clock", [ann])
got = step(ann, "CHALLENGE zed othello as X rated from random:4", [zed])
second = got[-1].split()[1]
got = step(zed, f"ACCEPT {second}", [ann])
game = got[0].split()[1]
step(zed, "END", [ann])
step(ann, "RATING")
step(ann, "TOP othello 5")
step(ann, "WHO")
for conn in (ann, zed):
    step(conn, "QUIT")
proc.terminate()
proc.wait(5)
shutil.rmtree(store_dir, ignore_errors=True)
print("\n".join(log))
