#!/usr/bin/env python3
"""A complete flipline bot: logs in, seeks games and answers TURN with a random move.

usage: random_bot.py [host[:port]] [name] [games] [variant] [--tls [--ca FILE]]
Only the standard library; the server sends the legal moves, so no rules are needed.
"""
import argparse
import random
import socket
import ssl
import sys


def arguments():
    parser = argparse.ArgumentParser(
        description="Logs in to a flipline daemon, seeks games and plays random legal moves.")
    parser.add_argument("server", nargs="?", default="127.0.0.1:7341",
                        help="the daemon, host[:port] (default 127.0.0.1:7341)")
    parser.add_argument("name", nargs="?", default="randombot", help="the name to play as")
    parser.add_argument("games", nargs="?", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("variant", nargs="?", default="othello", help="the game (default othello)")
    parser.add_argument("--tls", action="store_true",
                        help="connect to the daemon's TLS port (7342 if none is given)")
    parser.add_argument("--ca", metavar="FILE",
                        help="with --tls: the PEM file of the authority that signs the daemon's "
                             "certificate (default: the system's)")
    return parser.parse_args()


def connect(server, tls=False, ca=None):
    """A connection to host[:port], in TLS with the certificate verified and the
    host name checked if asked, or the program ends with a sentence."""
    host, _, port = server.partition(":")
    try:
        conn = socket.create_connection((host, int(port or (7342 if tls else 7341))), timeout=10)
        if tls:
            conn = ssl.create_default_context(cafile=ca).wrap_socket(conn, server_hostname=host)
        return conn
    except ssl.SSLCertVerificationError as e:
        sys.exit(f"{sys.argv[0]}: the certificate of {server} does not verify: {e.verify_message}")
    except (OSError, ValueError) as e:
        sys.exit(f"{sys.argv[0]}: cannot connect to {server}: {getattr(e, 'strerror', None) or e}")


def main():
    args = arguments()
    name, games, variant = args.name, args.games, args.variant
    conn = connect(args.server, args.tls, args.ca)
    conn.settimeout(None)
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
    try:
        main()
    except OSError as e:  # the connection broke while playing
        sys.exit(f"{sys.argv[0]}: the connection to the daemon failed: {e.strerror or e}")
    except KeyboardInterrupt:
        sys.exit(130)
