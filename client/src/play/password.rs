//! A registered name's password: where it comes from (`--password-file`,
//! `FLIP_PASSWORD`, or typed without echo when a plain `login NAME` is
//! answered that the name is registered: `[password-needed]`), the type that holds it without
//! ever printing it, and the `LOGIN` line that shows it. It is kept in
//! memory only, for the logins of `--reconnect`.

use std::fmt;
use std::io::Read;
use std::path::Path;

use flipline::protocol::{Command, Credential, ErrorCode, Reason, ServerLine};

/// The variable that gives the password for `--name`'s login.
pub const ENV: &str = "FLIP_PASSWORD";

/// A password. It has no `Display`, and its `Debug` hides it, so that it
/// reaches nothing but the `LOGIN` line.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// A password the protocol can carry: one word (no spaces, no control
    /// characters), not empty.
    pub fn new(word: &str) -> Result<Password, String> {
        if word.is_empty() {
            return Err("the password is empty".to_string());
        }
        if word.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("a password is one word: no spaces or control characters".to_string());
        }
        Ok(Password(word.to_string()))
    }

    /// The word, for the `LOGIN` line only.
    pub fn word(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(..)")
    }
}

/// `LOGIN <name> <password>`.
pub fn login_line(name: &str, password: &Password) -> String {
    format!("LOGIN {name} {}", password.word())
}

/// The name and the password a `LOGIN` line shows, if it shows one.
pub fn shown_password(line: &str) -> Option<(String, Password)> {
    match Command::parse(line) {
        Ok(Command::Login {
            name,
            credential: Some(Credential::Password(word)),
        }) => Some((name, Password::new(&word).ok()?)),
        _ => None,
    }
}

/// The password a file's text gives: its first line, the line ending
/// stripped.
pub fn from_text(text: &str) -> Result<Password, String> {
    let first = text.split('\n').next().unwrap_or("");
    Password::new(first.strip_suffix('\r').unwrap_or(first))
}

/// Refuses a password file that others than its owner may read or write
/// (as ssh refuses such a key): the password would be theirs too.
pub fn check_mode(mode: u32) -> Result<(), String> {
    if mode & 0o077 != 0 {
        return Err(format!(
            "others than its owner may read it (mode {:o}): chmod 600 it",
            mode & 0o777
        ));
    }
    Ok(())
}

/// The password in `path` (`--password-file`): the file only its owner may
/// read, the first line.
pub fn read_file(path: &Path) -> Result<Password, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        check_mode(meta.permissions().mode()).map_err(|e| format!("{shown}: {e}"))?;
    }
    let mut text = String::new();
    // A password is a line: the start of the file is enough.
    file.take(4096)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    from_text(&text).map_err(|e| format!("{shown}: {e}"))
}

/// The password given for `--name`'s login: the file's, else the
/// variable's, else none.
pub fn given(file: Option<&Path>) -> Result<Option<Password>, String> {
    if let Some(path) = file {
        return read_file(path).map(Some);
    }
    match std::env::var(ENV) {
        Ok(word) if !word.is_empty() => Password::new(&word)
            .map(Some)
            .map_err(|e| format!("{ENV}: {e}")),
        _ => Ok(None),
    }
}

/// Whether the reply `line` to a plain `LOGIN` says that the name is
/// registered and needs its password (`ERR 401 ... [password-needed]`), so
/// that the person may be asked for it. The reason word says so, not the
/// text, which is for people.
pub fn asks_for_password(line: &str) -> bool {
    let ServerLine::Err(e) = ServerLine::parse(line) else {
        return false;
    };
    e.code == ErrorCode::Unauthorized && Reason::of(&e.message) == Some(Reason::PasswordNeeded)
}

/// What a key typed at the password prompt did.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    /// Keep reading.
    More,
    /// Enter: the line is done.
    Done,
    /// Ctrl-C, or Ctrl-D on an empty line: no password.
    Cancelled,
}

/// The password being typed, read without echo one byte at a time (the
/// terminal neither echoes nor edits lines between prompts): Backspace
/// takes back a character, Ctrl-U the line. Pure.
#[derive(Default)]
pub struct HiddenLine(Vec<u8>);

impl HiddenLine {
    /// Takes one byte typed.
    pub fn key(&mut self, byte: u8) -> Typed {
        match byte {
            b'\r' | b'\n' => Typed::Done,
            0x03 => Typed::Cancelled,
            0x04 if self.0.is_empty() => Typed::Cancelled,
            0x7f | 0x08 => {
                // Back to the start of the last character.
                while let Some(b) = self.0.pop() {
                    if b & 0xc0 != 0x80 {
                        break;
                    }
                }
                Typed::More
            }
            0x15 => {
                self.0.clear();
                Typed::More
            }
            b if b < 0x20 => Typed::More,
            b => {
                self.0.push(b);
                Typed::More
            }
        }
    }

    /// What was typed, as a password.
    pub fn password(self) -> Result<Password, String> {
        let text = String::from_utf8(self.0).map_err(|_| "the password is not UTF-8")?;
        Password::new(&text)
    }
}

impl fmt::Debug for HiddenLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HiddenLine(..)")
    }
}

/// Reads a password from the terminal (standard input, which the prompt
/// loop has put in no-echo mode between prompts), byte by byte so that
/// nothing typed after it is taken. `Ok(None)` when cancelled.
pub fn read_hidden() -> Result<Option<Password>, String> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("cannot read the terminal: {e}"))?;
    let mut input = std::fs::File::from(fd);
    let mut line = HiddenLine::default();
    let mut byte = [0u8; 1];
    loop {
        match input.read(&mut byte) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read the terminal: {e}")),
        }
        match line.key(byte[0]) {
            Typed::More => {}
            Typed::Done => return line.password().map(Some),
            Typed::Cancelled => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_printed_and_is_one_word() {
        let p = Password::new("tiger").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(format!("{p:?}"), "Password(..)");
        assert_eq!(login_line("ann", &p), "LOGIN ann tiger");
        assert!(Password::new("").is_err());
        assert!(Password::new("two words").is_err());
        assert!(Password::new("tab\there").is_err());
        let (name, shown) = shown_password("login ann tiger").unwrap_or_else(|| panic!());
        assert_eq!((name.as_str(), shown), ("ann", p));
        assert_eq!(shown_password("LOGIN ann secret 0f3a"), None);
        assert_eq!(shown_password("LOGIN ann"), None);
    }

    #[test]
    fn a_password_file_gives_its_first_line() {
        let word = |text: &str| from_text(text).map(|p| p.word().to_string());
        assert_eq!(word("tiger\n").as_deref(), Ok("tiger"));
        assert_eq!(word("tiger\r\nmore\n").as_deref(), Ok("tiger"));
        assert_eq!(word("tiger").as_deref(), Ok("tiger"));
        assert!(word("\ntiger\n").is_err(), "an empty first line");
        assert!(word("").is_err());
        assert!(word("ti ger\n").is_err());
    }

    #[test]
    fn a_password_file_others_may_read_is_refused() {
        assert!(check_mode(0o100600).is_ok());
        assert!(check_mode(0o100400).is_ok());
        let refused = check_mode(0o100644).unwrap_err();
        assert!(
            refused.contains("mode 644") && refused.contains("chmod 600"),
            "{refused}"
        );
        assert!(check_mode(0o100640).is_err());
        assert!(check_mode(0o100602).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn read_file_checks_the_mode_then_reads_the_first_line() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("flip-password-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join("pw");
        std::fs::write(&file, "s3same\n").unwrap_or_else(|e| panic!("{e}"));
        let set = |mode| std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode));
        set(0o644).unwrap_or_else(|e| panic!("{e}"));
        let refused = read_file(&file).unwrap_err();
        assert!(refused.contains("chmod 600"), "{refused}");
        assert!(!refused.contains("s3same"), "{refused}");
        set(0o600).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read_file(&file)
                .map(|p| p.word().to_string())
                .ok()
                .as_deref(),
            Some("s3same")
        );
        assert!(
            read_file(&dir.join("none"))
                .unwrap_err()
                .contains("cannot read")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_a_401_with_its_reason_word_asks_for_the_password() {
        let registered = "ERR 401 'Ann' is registered: LOGIN Ann <password> [password-needed]";
        assert!(asks_for_password(registered));
        assert!(asks_for_password("ERR 401 other words [password-needed]"));
        // The text alone says nothing: it is for people.
        assert!(!asks_for_password(
            "ERR 401 'Ann' is registered: LOGIN Ann <password>"
        ));
        assert!(!asks_for_password("ERR 401 wrong password for 'ann'"));
        assert!(!asks_for_password(
            "ERR 401 guests may not play here: LOGIN name password registers a name"
        ));
        assert!(!asks_for_password("ERR 409 'ann' in use [password-needed]"));
        assert!(!asks_for_password("ERR 401 [password-needed] at the start"));
        assert!(!asks_for_password("OK ann"));
    }

    #[test]
    fn the_hidden_line_edits_and_ends() {
        let typed = |keys: &[u8]| {
            let mut line = HiddenLine::default();
            for &k in keys {
                match line.key(k) {
                    Typed::More => {}
                    Typed::Done => return Some(line.password().map(|p| p.word().to_string())),
                    Typed::Cancelled => return None,
                }
            }
            panic!("no Enter")
        };
        assert_eq!(typed(b"tiger\r"), Some(Ok("tiger".to_string())));
        assert_eq!(typed(b"tigex\x7fr\n"), Some(Ok("tiger".to_string())));
        assert_eq!(typed(b"junk\x15tiger\r"), Some(Ok("tiger".to_string())));
        assert_eq!(
            typed("t\u{e9}\x7fi\r".as_bytes()),
            Some(Ok("ti".to_string())),
            "Backspace takes back a whole character"
        );
        assert_eq!(typed(b"tig\x03"), None);
        assert_eq!(typed(b"\x04"), None);
        assert!(matches!(typed(b"\r"), Some(Err(_))));
        assert_eq!(
            format!("{:?}", HiddenLine(b"tiger".to_vec())),
            "HiddenLine(..)"
        );
    }
}
