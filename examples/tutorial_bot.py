#!/usr/bin/env python3
"""The tutorial's bot: logs in, seeks a game of othello, answers each TURN
of its side (a corner when it can, else any legal move), prints the result
and quits. Usage: tutorial_bot.py [HOST:PORT] [NAME]"""
import random
import socket
import sys

CORNERS = {"a1", "h1", "a8", "h8"}

server = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:7341"
name = sys.argv[2] if len(sys.argv) > 2 else "pybot"
host, port = server.rsplit(":", 1)
conn = socket.create_connection((host, int(port)))


def send(command):
    conn.sendall((command + "\n").encode())


send(f"LOGIN {name}")
send("SEEK othello")
sides = {}  # game -> the side this bot plays there, X or O
for line in conn.makefile(encoding="utf-8"):
    words = line.split()
    if words[0] == "START":  # START <game> <variant> <black> <white> <clock>
        sides[words[1]] = "X" if words[3] == name else "O"
    elif words[0] == "TURN" and sides.get(words[1]) == words[2]:
        moves = words[3].split(",")  # TURN <game> <side> <moves|pass>
        if moves == ["pass"]:
            send("PASS")
        else:
            send("MOVE " + random.choice([m for m in moves if m in CORNERS] or moves))
    elif words[0] == "OVER":  # OVER <game> <winner> <black> <white> <how>
        print(f"game {words[1]} over: {words[2]} {words[3]}-{words[4]} ({words[5]})")
        send("QUIT")
    elif words[0] == "ERR":
        print(line.strip(), file=sys.stderr)
