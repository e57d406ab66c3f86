#!/usr/bin/env python3
"""A flipline bot that plays rated games on challenge: it registers its name
(or logs in with it), marks it a program's, accepts every challenge in the
variants it plays and declines the others with the reason, and answers TURN
with a random move. With --challenge NAME it challenges NAME itself.

usage: challenge_bot.py HOST:PORT NAME PASSWORD [--games N] [--variants othello,anti]
                        [--challenge NAME [--rated] [--random-start N]]
Only the standard library. It stops after N games (default 1).
"""
import argparse
import random
import socket
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("server")
    parser.add_argument("name")
    parser.add_argument("password")
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--variants", default="othello")
    parser.add_argument("--challenge", metavar="NAME")
    parser.add_argument("--rated", action="store_true")
    parser.add_argument("--random-start", type=int, metavar="N")
    args = parser.parse_args()
    host, port = args.server.rsplit(":", 1)
    conn = socket.create_connection((host, int(port)))
    lines = conn.makefile("r", encoding="utf-8", newline="\n")
    send = lambda text: conn.sendall((text + "\n").encode())
    assert lines.readline().startswith("HELLO flipline 1")
    send(f"LOGIN {args.name} {args.password}")
    send("ACCOUNT bot")
    variants = set(args.variants.split(","))

    def challenge():
        terms = "rated" if args.rated else "casual"
        if args.random_start:
            terms += f" from random:{args.random_start}"
        send(f"CHALLENGE {args.challenge} {sorted(variants)[0]} {terms}")

    if args.challenge:
        challenge()
    me, played = {}, 0  # game id -> my colours, games finished
    try:
        play(lines, send, args, variants, challenge, conn, me, played)
    except socket.timeout:
        pass  # the last game was not rated: no RATED came
    send("QUIT")
    conn.close()


def play(lines, send, args, variants, challenge, conn, me, played):
    for line in lines:
        words = line.split()
        if not words:
            continue
        if words[0] == "ERR":
            print(line.strip(), file=sys.stderr)
        elif words[0] == "CHALLENGE":  # CHALLENGE <id> <from> <variant> <side> <clock> <rated>
            reason = None if words[3] in variants else "variant"
            send(f"ACCEPT {words[1]}" if reason is None else f"DECLINE {words[1]} {reason}")
        elif words[0] == "DECLINED":  # DECLINED <id> <name> <reason>
            print(f"challenge {words[1]} declined by {words[2]}: {words[3]}")
            if args.challenge and words[3] in ("later", "timeout"):
                challenge()
        elif words[0] == "START":  # START <game> <variant> <black> <white> <clock>
            me[words[1]] = {c for c, who in (("X", words[3]), ("O", words[4])) if who == args.name}
        elif words[0] == "TURN" and words[2] in me.get(words[1], ()):  # TURN <game> <side> <moves>
            moves = words[3]
            send("PASS" if moves == "pass" else "MOVE " + random.choice(moves.split(",")))
        elif words[0] == "RATED" and words[2] == args.name:  # RATED <game> <name> <before> <after>
            print(f"game {words[1]}: rated {words[3]} -> {words[4]}")
            if played >= args.games:
                return
        elif words[0] == "OVER" and words[1] in me:  # OVER <game> <winner> <black> <white> <reason>
            played += 1
            print(f"game {words[1]}: winner {words[2]}, {words[3]}-{words[4]} ({words[5]})")
            if played >= args.games:
                # A rated game's RATED lines follow its OVER.
                conn.settimeout(3)
                continue
            send("LEAVE")
            if args.challenge:
                challenge()


if __name__ == "__main__":
    main()
