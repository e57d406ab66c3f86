#!/usr/bin/env python3
"""Captures the example session of PROTOCOL.md from a real flipd.

Usage: python3 tests/tools/capture_session.py target/debug/flipd

Starts the daemon on port 0, drives three connections (ann and bob seek and
play, eve watches), and prints one interleaved log: 'name > line' for a line a
client sends, 'name < line' for a line it receives. Colours are drawn at random
by the daemon, so the moves are made by whoever is black or white.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_log import Conn, Daemon, step  # noqa: E402

daemon = Daemon(sys.argv[1])
ann, bob = Conn(daemon, "ann"), Conn(daemon, "bob")
step(ann, "LOGIN ann")
step(ann, "SEEK othello")
step(bob, "LOGIN bob")
start = next(l for l in step(bob, "SEEK othello", [ann]) if l.startswith("START"))
_, game, _, black, white, _ = start.split()
X, O = {"ann": ann, "bob": bob}[black], {"ann": ann, "bob": bob}[white]
eve = Conn(daemon, "eve")
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
daemon.stop()
print("\n".join(daemon.log))
