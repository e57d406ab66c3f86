#!/usr/bin/env python3
"""A complete flipline bot: logs in, seeks games and answers TURN with a random move.

usage: random_bot.py [host:port] [name] [games] [variant]
Only the standard library; the server sends the legal moves, so no rules are needed.
"""
import random
import socket
import sys


def main():
    host, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:7341").rsplit(":", 1)
    name = sys.argv[2] if len(sys.argv) > 2 else "randombot"
    games = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    variant = sys.argv[4] if len(sys.argv) > 4 else "othello"
    conn = socket.create_connection((host, int(port)))
    lines = conn.makefile("r", encoding="utf-8", newline="\n")
    send = lambda text: conn.sendall((text + "\n").encode())
    assert lines.readline().startswith("HELLO flipline 1")
    send(f"LOGIN {name}")
    send(f"SEEK {variant}")
    me, played = {}, 0  # game id -> my colours (a set), games finished
    for line in lines:
        words = line.split()
        if words[0] == "ERR":
            print(line.strip(), file=sys.stderr)
        elif words[0] == "START":  # START <game> <variant> <black> <white> <clock>
            me[words[1]] = {c for c, who in (("X", words[3]), ("O", words[4])) if who == name}
        elif words[0] == "TURN" and words[2] in me.get(words[1], ()):  # TURN <game> <side> <moves>
            moves = words[3]
            send("PASS" if moves == "pass" else "MOVE " + random.choice(moves.split(",")))
        elif words[0] == "OVER":  # OVER <game> <winner> <black> <white> <reason>
            played += 1
            print(f"game {words[1]}: winner {words[2]}, {words[3]}-{words[4]} ({words[5]})")
            if played >= games:
                send("QUIT")
                break
            send(f"SEEK {variant}")
    conn.close()


if __name__ == "__main__":
    main()
