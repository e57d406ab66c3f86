//! A guest's `LOGIN` never waits for the disk: which names are registered is
//! known from memory. With the store's file system frozen for real (`fsfreeze`
//! on an ext4 image mounted for the test, so it runs as root and fails, never
//! skips, without it) a guest logs in while a registered name's `LOGIN` and
//! `HISTORY` still answer `ERR 503` once the store deadline has passed. And a
//! registration the store has not answered yet (the fault switch's frozen
//! store) keeps the name from guests until it does.

use std::path::{Path, PathBuf};
use std::process::Command;

use flipd::store::Faults;
use flipline_tests::*;

/// Runs `program` with `args`, which must succeed; `why` says why the test
/// needs it (root, for most).
fn run(program: &str, args: &[&str], path: &Path, why: &str) {
    let output = Command::new(program)
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {} {} failed ({}): {why}",
        args.join(" "),
        path.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    );
}

/// An ext4 file system in an image file, mounted on a fresh directory for one
/// test (tmpfs cannot be frozen); unmounted and removed when dropped.
struct Ext4Volume {
    dir: PathBuf,
    image_dir: PathBuf,
}

impl Ext4Volume {
    fn mount() -> Ext4Volume {
        let image_dir = temp_dir("ext4-image");
        let image = image_dir.join("volume.img");
        let file = std::fs::File::create(&image).unwrap_or_else(|e| panic!("image: {e}"));
        file.set_len(16 << 20)
            .unwrap_or_else(|e| panic!("image size: {e}"));
        run("mkfs.ext4", &["-q", "-F"], &image, "mkfs.ext4 is needed");
        let dir = temp_dir("ext4-volume");
        let volume = Ext4Volume { dir, image_dir };
        let why = "this test freezes a file system and must run as root";
        let mount = Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&volume.dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        assert!(
            mount.status.success(),
            "cannot mount {} on {} ({}): {why}",
            image.display(),
            volume.dir.display(),
            String::from_utf8_lossy(&mount.stderr).trim()
        );
        volume
    }

    /// Freezes the file system until the guard is dropped.
    fn freeze(&self) -> Frozen<'_> {
        let why = "this test freezes a file system and must run as root";
        run("fsfreeze", &["--freeze"], &self.dir, why);
        Frozen { dir: &self.dir }
    }
}

impl Drop for Ext4Volume {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
        remove_temp_dir(&self.dir);
        remove_temp_dir(&self.image_dir);
    }
}

/// A frozen file system, thawed when dropped (also when the test fails, so
/// that the daemon can stop).
struct Frozen<'a> {
    dir: &'a Path,
}

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze")
            .arg("--unfreeze")
            .arg(self.dir)
            .status();
    }
}

/// `reply` is the 503 of a store that did not answer in time.
fn assert_not_answering(reply: &str) {
    assert!(
        reply.starts_with("ERR 503 ") && reply.contains("not answering"),
        "{reply}"
    );
}

#[test]
fn a_guest_logs_in_while_the_stores_file_system_is_frozen() {
    if sqlite_only("freezes a SQLite file's file system") {
        return;
    }
    let volume = Ext4Volume::mount();
    let mut config = test_config();
    config.store.path = volume.dir.join("flipline.db");
    config.store_deadline_ms = 1000;
    let daemon = start(config);
    let addr = daemon.addr;
    let mut reg = Client::connect(addr);
    assert_eq!(reg.ok("LOGIN Reg pw").1, "OK Reg registered");
    let g = reg.ok_game("NEW othello hotseat");
    reg.lines_through(&format!("TURN {g} X"));
    reg.ok(&format!("HISTORY {g}"));
    // A commit after the last read: the next read marks where it reads in
    // the store's shared memory, a write that waits for the thaw.
    reg.ok("MOVE f5");
    drop(reg);

    let frozen = volume.freeze();
    // A password for a registered name reads its hash: the store's deadline.
    let mut member = Client::connect(addr);
    member.send("LOGIN reg pw");
    // A guest reads nothing: answered while the file system is frozen (each
    // read below is bounded by READ_TIMEOUT, a guard against a hang only).
    let mut guest = Client::connect(addr);
    guest.login("gus");
    let mut other = Client::connect(addr);
    let registered = other.err("LOGIN REG", 401);
    assert!(
        registered.starts_with("ERR 401 'Reg' is registered")
            && registered.ends_with(" [password-needed]"),
        "from memory, as spelled: {registered}"
    );
    assert_not_answering(&member.line());
    assert_not_answering(&guest.err(&format!("HISTORY {g}"), 503));
    assert_eq!(guest.ok("WHO").1, "OK 1");
    drop(frozen);

    assert_eq!(member.ok("LOGIN reg pw").1, "OK Reg seat 1");
    let (history, _) = guest.ok(&format!("HISTORY {g}"));
    assert_eq!(
        history,
        [format!("HISTORY {g} othello Reg Reg - playing - f5")]
    );
    drop(daemon);
}

#[test]
fn a_registration_the_store_has_not_answered_keeps_the_name_from_guests() {
    let faults = Faults::new();
    let mut config = test_config();
    config.store.faults = Some(faults.clone());
    config.store_deadline_ms = 300;
    let daemon = start(config);
    let addr = daemon.addr;

    faults.freeze();
    let mut registrant = Client::connect(addr);
    let given_up = registrant.err("LOGIN ann pw", 503);
    assert!(given_up.contains("not answering"), "{given_up}");
    // The name is back in the lobby, but its registration may be stored:
    // neither a guest nor a password takes it meanwhile.
    let mut guest = Client::connect(addr);
    let in_flight = guest.err("LOGIN ann", 503);
    assert!(in_flight.contains("being registered"), "{in_flight}");
    let again = registrant.err("LOGIN ANN other", 503);
    assert!(again.contains("being registered"), "{again}");
    assert!(guest.ok("LOGIN bob").1.starts_with("OK bob secret "));

    faults.heal();
    // Once stored it is registered: the store's answer reaches the accounts
    // on its own (nothing tells a client when), so a retry while it is in
    // flight is 503 again; READ_TIMEOUT only guards against a hang.
    let given_up_at = std::time::Instant::now() + READ_TIMEOUT;
    let logged_in = loop {
        let (_, reply) = registrant.command("LOGIN ann pw");
        if !reply.contains("being registered") || std::time::Instant::now() > given_up_at {
            break reply;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(logged_in, "OK ann");
    let mut late = Client::connect(addr);
    late.err("LOGIN ann", 401);
}
