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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_log import Conn, Daemon, slow  # noqa: E402

daemon = Daemon(sys.argv[1])


ann, zed = Conn(daemon, "ann"), Conn(daemon, "zed")
slow(ann, "LOGIN ann tiger-ann")
slow(zed, "LOGIN zed tiger-zed")
slow(zed, "ACCOUNT bot")
got = slow(ann, "CHALLENGE zed othello clock 5+3", [zed])
first = got[-1].split()[1]
slow(zed, f"DECLINE {first} clock", [ann])
got = slow(ann, "CHALLENGE zed othello as X rated from random:4", [zed])
second = got[-1].split()[1]
got = slow(zed, f"ACCEPT {second}", [ann])
game = got[0].split()[1]
slow(zed, "END", [ann])
slow(ann, "RATING")
slow(ann, "TOP othello 5")
slow(ann, "WHO")
for conn in (ann, zed):
    slow(conn, "QUIT")
daemon.stop()
print("\n".join(daemon.log))
