//! Guessing passwords and registering names in bulk: parallel connections
//! get no more guesses than the budgets (what is over them is answered `ERR
//! 429` at once, unhashed: counted here by the replies, not by time), the
//! owner logs in while an attack runs and resets nobody's back-off, and one
//! address registers its allowance and no more. Clients bind other loopback
//! addresses to be other peers.

use std::net::{Ipv4Addr, SocketAddr};

use flipline_tests::*;

const ATTACKER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 9);
const OWNER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 20);

/// 127.0.0.`n`.
fn host(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, n)
}

/// Registers `name` with `password` from `source`.
fn register(addr: SocketAddr, source: Ipv4Addr, name: &str, password: &str) {
    let mut c = Client::connect_from(addr, source);
    assert_eq!(
        c.command(&format!("LOGIN {name} {password}")).1,
        format!("OK {name} registered")
    );
}

/// Sends `lines[i]` on connection `i` (each from its `sources[i]`), all
/// before reading any answer, and returns the answers in the same order.
fn at_once(addr: SocketAddr, sources: &[Ipv4Addr], lines: &[String]) -> Vec<String> {
    let mut clients: Vec<Client> = sources
        .iter()
        .map(|source| Client::connect_from(addr, *source))
        .collect();
    for (client, line) in clients.iter_mut().zip(lines) {
        client.send(line);
    }
    clients
        .iter_mut()
        .map(|c| c.final_reply("LOGIN").1)
        .collect()
}

fn count(replies: &[String], prefix: &str) -> usize {
    replies.iter().filter(|r| r.starts_with(prefix)).count()
}

#[test]
fn parallel_wrong_guesses_for_a_name_from_one_address_get_one_hash() {
    let mut config = test_config();
    // Long enough that no connection of the burst comes after it, however
    // slowly a loaded machine reads them (the one wrong guess is answered
    // after it, so the test takes that long).
    config.passwords.failure_delay_ms = 10_000;
    let daemon = start(config);
    register(daemon.addr, OWNER, "ann", "right");
    let lines: Vec<String> = (0..20).map(|i| format!("LOGIN ann wrong{i}")).collect();
    let replies = at_once(daemon.addr, &[ATTACKER; 20], &lines);
    assert_eq!(
        count(&replies, "ERR 401 wrong password for 'ann'"),
        1,
        "{replies:?}"
    );
    let refused = "ERR 429 too many wrong passwords for 'ann': wait ";
    assert_eq!(count(&replies, refused), 19, "{replies:?}");
}

#[test]
fn parallel_wrong_guesses_over_many_names_from_one_address_get_its_budget() {
    let mut config = test_config();
    // As above: no guess of the burst may come after the back-off.
    config.passwords.failure_delay_ms = 10_000;
    config.passwords.failures_per_address = 3;
    let daemon = start(config);
    let names: Vec<String> = (0..20).map(|i| format!("user{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        register(daemon.addr, host(30 + i as u8), name, "right");
    }
    let lines: Vec<String> = names.iter().map(|n| format!("LOGIN {n} wrong")).collect();
    let replies = at_once(daemon.addr, &[ATTACKER; 20], &lines);
    assert_eq!(
        count(&replies, "ERR 401 wrong password for "),
        3,
        "{replies:?}"
    );
    let refused = "ERR 429 too many wrong passwords from your address: wait ";
    assert_eq!(count(&replies, refused), 17, "{replies:?}");
}

#[test]
fn the_owner_logs_in_during_an_attack_and_resets_nobody() {
    let mut config = test_config();
    // Long enough that no address guesses again after its back-off while
    // the test runs, however loaded the machine.
    config.passwords.failure_delay_ms = 10_000;
    let daemon = start(config);
    register(daemon.addr, OWNER, "ann", "right");
    // Ten addresses, four connections each, all guessing at once; the owner
    // logs in once the attack is under way (its first refusals are back).
    let mut attackers: Vec<Client> = (0..40)
        .map(|i| Client::connect_from(daemon.addr, host(40 + i / 4)))
        .collect();
    for (i, c) in attackers.iter_mut().enumerate() {
        c.send(&format!("LOGIN ann wrong{i}"));
    }
    let mut replies = Vec::new();
    while !replies.iter().any(|r: &String| r.starts_with("ERR 429 ")) {
        let Some(mut c) = attackers.pop() else { break };
        replies.push(c.final_reply("LOGIN").1);
    }
    let mut owner = Client::connect_from(daemon.addr, OWNER);
    // Answered at all (the read's bound is a hang guard) while the
    // attackers' answers still wait out their back-off.
    assert_eq!(owner.command("LOGIN ann right").1, "OK ann");
    // The owner's right password reset no attacker's back-off: asked before
    // the attack's answers (which wait out their back-off) are read.
    let mut again = Client::connect_from(daemon.addr, host(40));
    let reply = again.command("LOGIN ann wrong").1;
    assert!(
        reply.starts_with("ERR 429 too many wrong passwords for 'ann': wait "),
        "{reply}"
    );
    replies.extend(attackers.iter_mut().map(|c| c.final_reply("LOGIN").1));
    assert_eq!(
        count(&replies, "ERR 401 "),
        10,
        "one per address: {replies:?}"
    );
    assert_eq!(count(&replies, "ERR 429 "), 30, "{replies:?}");
    // A clean address still gets its guess checked.
    let mut fresh = Client::connect_from(daemon.addr, host(99));
    assert_eq!(
        fresh.command("LOGIN ann nope").1,
        "ERR 401 wrong password for 'ann'"
    );
}

#[test]
fn an_address_registers_its_allowance_and_no_more() {
    let mut config = test_config();
    config.passwords.registrations_per_hour = 3;
    let daemon = start(config);
    let from = host(50);
    for name in ["reg1", "reg2", "reg3"] {
        register(daemon.addr, from, name, "pw");
    }
    let mut fourth = Client::connect_from(daemon.addr, from);
    assert_eq!(
        fourth.command("LOGIN reg4 pw").1,
        "ERR 429 too many registrations from your address, try again in 20 min"
    );
    // Logging in to a name already registered is no registration, and
    // another address registers.
    assert_eq!(fourth.command("LOGIN reg1 pw").1, "OK reg1");
    register(daemon.addr, host(51), "reg4", "pw");
}

#[test]
fn a_flood_of_registrations_does_not_keep_a_login_waiting() {
    let mut config = test_config();
    config.passwords.hash_queue = 4;
    let daemon = start(config);
    register(daemon.addr, OWNER, "ann", "right");
    // Thirty registrations from thirty addresses, all at once: the queue
    // holds four, the rest are told the threads are busy.
    let mut flood: Vec<Client> = (0..30)
        .map(|i| Client::connect_from(daemon.addr, host(100 + i)))
        .collect();
    for (i, c) in flood.iter_mut().enumerate() {
        c.send(&format!("LOGIN flood{i} pw"));
    }
    // Once one is turned away the queue is full of registrations: a login
    // now goes before them (one of them makes room).
    let busy = "ERR 503 too busy, try again in ";
    let mut replies = Vec::new();
    let first_busy = loop {
        let Some(mut c) = flood.pop() else {
            panic!("no registration was turned away: {replies:?}");
        };
        let reply = c.final_reply("LOGIN").1;
        if reply.starts_with(busy) {
            break reply;
        }
        replies.push(reply);
    };
    let mut owner = Client::connect_from(daemon.addr, OWNER);
    assert_eq!(owner.command("LOGIN ann right").1, "OK ann");
    assert!(first_busy.ends_with(" s"), "{first_busy}");
    for mut c in flood {
        let reply = c.final_reply("LOGIN").1;
        assert!(
            reply.starts_with("OK flood") || reply.starts_with(busy),
            "{reply}"
        );
    }
}
