#!/usr/bin/env python3
"""A flipline bot that plays rated games on challenge and in tournaments: it
registers its name (or logs in with it), marks it a program's, accepts every
challenge in the variants it plays and declines the others with the reason,
and answers TURN with a random move. With --challenge NAME it challenges NAME
itself. With --tourney-join it joins the first open tournament (waiting for
one), with --tourney-new TERMS it makes one and starts it once
--tourney-size players have joined; either way it plays the tournament's
games as they start and stops at its end, printing the standings.

usage: challenge_bot.py HOST:PORT NAME PASSWORD [--tls [--ca FILE]] [--games N] [--variants othello,anti]
                        [--challenge NAME [--rated] [--random-start N]]
                        [--tourney-join | --tourney-new TERMS [--tourney-size N]]
Only the standard library. It stops after N games (default 1).
"""
import argparse
import random
import socket
import ssl
import sys
import time


def main():
    parser = argparse.ArgumentParser(
        description="Plays rated games on challenge and in tournaments, random legal moves.")
    parser.add_argument("server", help="the daemon, host[:port] (port 7341 if none)")
    parser.add_argument("name", help="the name to register, or log in with")
    parser.add_argument("password", help="its password")
    parser.add_argument("--tls", action="store_true",
                        help="connect to the daemon's TLS port (7342 if none is given), so that "
                             "the password never crosses the network in the clear")
    parser.add_argument("--ca", metavar="FILE",
                        help="with --tls: the PEM file of the authority that signs the daemon's "
                             "certificate (default: the system's)")
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("--variants", default="othello",
                        help="games accepted, comma-separated (default othello)")
    parser.add_argument("--challenge", metavar="NAME", help="challenge NAME (again after 'later')")
    parser.add_argument("--rated", action="store_true", help="make the challenge rated")
    parser.add_argument("--random-start", type=int, metavar="N",
                        help="the challenge starts after N random moves")
    parser.add_argument("--tourney-join", action="store_true",
                        help="join the first open tournament and play it")
    parser.add_argument("--tourney-new", metavar="TERMS",
                        help="make a tournament (TOURNEY NEW's terms), start it and play it")
    parser.add_argument("--tourney-size", type=int, default=2,
                        help="players the made tournament waits for (default 2)")
    args = parser.parse_args()
    host, _, port = args.server.partition(":")
    try:
        conn = socket.create_connection((host, int(port or (7342 if args.tls else 7341))),
                                        timeout=10)
        if args.tls:  # the certificate verified, the host name checked
            context = ssl.create_default_context(cafile=args.ca)
            conn = context.wrap_socket(conn, server_hostname=host)
    except ssl.SSLCertVerificationError as e:
        sys.exit(f"{sys.argv[0]}: the certificate of {args.server} does not verify: "
                 f"{e.verify_message}")
    except (OSError, ValueError) as e:
        sys.exit(f"{sys.argv[0]}: cannot connect to {args.server}: "
                 f"{getattr(e, 'strerror', None) or e}")
    conn.settimeout(None)
    lines = conn.makefile("r", encoding="utf-8", newline="\n")
    sent = []  # the commands sent whose final reply has not come yet, oldest first

    def send(text):
        sent.append(text)
        conn.sendall((text + "\n").encode())

    assert lines.readline().startswith("HELLO flipline 1")
    send(f"LOGIN {args.name} {args.password}")
    send("ACCOUNT bot")
    variants = set(args.variants.split(","))

    def challenge():
        terms = "rated" if args.rated else "casual"
        if args.random_start:
            terms += f" from random:{args.random_start}"
        send(f"CHALLENGE {args.challenge} {sorted(variants)[0]} {terms}")

    tourney = None
    if args.tourney_new or args.tourney_join:
        conn.settimeout(300)  # a tournament that never ends is an error
        tourney = enter_tourney(lines, send, args)
    if args.challenge:
        challenge()
    me, played = {}, 0  # game id -> my colours, games finished
    try:
        if tourney is not None:
            play_tourney(lines, send, args, tourney, me)
        else:
            play(lines, send, sent, args, variants, challenge, conn, me, played)
    except socket.timeout:
        pass  # the last game was not rated: no RATED came
    send("QUIT")
    conn.close()


def command(lines, send, text):
    """Sends a command (or, without text, reads the reply to one sent); its
    data lines and final reply (events meanwhile are dropped: before a
    tournament starts there are none that matter)."""
    if text:
        send(text)
    data = []
    for line in lines:
        line = line.rstrip("\n")
        if line == "OK" or line.startswith(("OK ", "ERR ")):
            return data, line
        data.append(line)
    sys.exit("the server closed the connection")


def open_tourneys(lines, send):
    """TOURNEY LIST as (id, players) of the open ones.
    TOURNEY <t> <kind> <variant> <clock|-> <open|running|over> <players> <round>/<rounds>"""
    data, _ = command(lines, send, "TOURNEY LIST")
    rows = [line.split() for line in data if line.startswith("TOURNEY ")]
    return [(int(w[1]), int(w[6])) for w in rows if len(w) >= 8 and w[5] == "open"]


def enter_tourney(lines, send, args):
    """Makes or joins a tournament; its number once this bot is in it (and,
    for its maker, once it is started)."""
    deadline = time.monotonic() + 60
    for sent in ("LOGIN", "ACCOUNT"):
        _, reply = command(lines, send, None)
        if reply.startswith("ERR"):
            sys.exit(f"{sent}: {reply}")
    if args.tourney_new:
        _, reply = command(lines, send, f"TOURNEY NEW {args.tourney_new}")
        if not reply.startswith("OK "):
            sys.exit(f"TOURNEY NEW: {reply}")
        tourney = int(reply.split()[1])
        command(lines, send, f"TOURNEY JOIN {tourney}")
        print(f"tournament {tourney}: made, waiting for {args.tourney_size} players")
        while dict(open_tourneys(lines, send)).get(tourney, 0) < args.tourney_size:
            if time.monotonic() > deadline:
                sys.exit("not enough players joined")
            time.sleep(0.1)
        # Not waited for: its games may start before its OK arrives.
        send(f"TOURNEY START {tourney}")
        return tourney
    while True:
        for tourney, _ in open_tourneys(lines, send):
            _, reply = command(lines, send, f"TOURNEY JOIN {tourney}")
            if reply == "OK":
                print(f"tournament {tourney}: joined")
                return tourney
        if time.monotonic() > deadline:
            sys.exit("no open tournament to join")
        time.sleep(0.1)


def play_tourney(lines, send, args, tourney, me):
    """Plays the games the tournament starts until it is over, then prints
    its standings: STANDING <t> <rank> <name> <points> <games> <disc-diff>."""
    for line in lines:
        words = line.split()
        if not words:
            continue
        if words[0] == "ERR":
            sys.exit(line.strip())
        elif words[0] == "START":
            me[words[1]] = {c for c, who in (("X", words[3]), ("O", words[4])) if who == args.name}
        elif words[0] == "TURN" and words[2] in me.get(words[1], ()):
            moves = words[3]
            send("PASS" if moves == "pass" else "MOVE " + random.choice(moves.split(",")))
        elif words[0] == "OVER" and words[1] in me:
            print(f"game {words[1]}: winner {words[2]}, {words[3]}-{words[4]} ({words[5]})")
        elif words[0] == "RATED" and words[2] == args.name:  # RATED <game> <name> <before> <after>
            print(f"game {words[1]}: rated {words[3]} -> {words[4]}")
        elif words[:3] == ["TOURNEY", str(tourney), "round"]:
            print(f"tournament {tourney}: round {words[3]}")
        elif words[:3] == ["TOURNEY", str(tourney), "over"]:
            print(f"tournament {tourney}: over, won by {words[3]}")
            data, _ = command(lines, send, f"TOURNEY SHOW {tourney}")
            for standing in data:
                if standing.startswith("STANDING "):
                    _, _, rank, name, points, games, discs = standing.split()[:7]
                    print(f"{rank}. {name} {points} points in {games} games, discs {discs}")
            return


def retry_after(line):
    """The seconds an `ERR 429 ... wait N s` asks to wait (a tenth if it says none)."""
    words = line.split()
    if "wait" in words[:-1]:
        try:
            return float(words[words.index("wait") + 1])
        except ValueError:
            pass
    return 0.1


def play(lines, send, sent, args, variants, challenge, conn, me, played):
    for line in lines:
        words = line.split()
        if not words:
            continue
        if words[0] in ("OK", "ERR"):  # replies come in the order of the commands
            replied = sent.pop(0) if sent else None
            if words[:2] == ["ERR", "429"] and replied:
                # Too fast: the command was not carried out; send it again in time.
                time.sleep(retry_after(line))
                send(replied)
            elif words[0] == "ERR":
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
    try:
        main()
    except OSError as e:  # the connection broke while playing
        sys.exit(f"{sys.argv[0]}: the connection to the daemon failed: {e.strerror or e}")
    except KeyboardInterrupt:
        sys.exit(130)
