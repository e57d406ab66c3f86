#!/usr/bin/env python3
"""Captures PROTOCOL.md's tournament session from a real flipd.

Usage: python3 tests/tools/capture_tourney_session.py target/debug/flipd

Starts the daemon on port 0 with a store of its own: ann makes a rated
round robin of tic-tac-toe, zed and ann join it, ann starts it; each of
its two rounds is one game (colours swapped) that its black resigns;
then the standings and the list. Prints one interleaved log: 'name >
line' sent, 'name < line' received.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_log import Conn, Daemon, slow  # noqa: E402

daemon = Daemon(sys.argv[1])


ann, zed = Conn(daemon, "ann"), Conn(daemon, "zed")
slow(ann, "LOGIN ann tiger-ann")
slow(zed, "LOGIN zed tiger-zed")
got = slow(ann, "TOURNEY NEW roundrobin tictactoe rated")
tourney = got[-1].split()[1]
slow(ann, f"TOURNEY JOIN {tourney}")
slow(zed, f"TOURNEY JOIN {tourney}")
slow(zed, "TOURNEY LIST")
slow(ann, f"TOURNEY START {tourney}", [zed])
# Round 1's black resigns; round 2 swaps the colours, and its black resigns.
for _ in range(2):
    start = [line for line in ann.seen if line.startswith("START ")][-1]
    black, white = (ann, zed) if start.split()[3] == "ann" else (zed, ann)
    slow(black, "END", [white])
slow(zed, f"TOURNEY SHOW {tourney}")
slow(zed, "TOURNEY LIST")
for conn in (ann, zed):
    slow(conn, "QUIT")
daemon.stop()
print("\n".join(daemon.log))
