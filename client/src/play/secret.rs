//! A guest's secret: `LOGIN ann` answers `OK ann secret TOKEN`, and `LOGIN
//! ann secret TOKEN` takes the name (and the seat kept through a disconnect)
//! back while the daemon holds it. Here are the type that holds a secret
//! without ever printing it, the lines that show it, and what a reply to a
//! `LOGIN` means for it; the view and the bot share them. Pure.

use std::fmt;

use flipline::protocol::{
    Command, CommandKind, Credential, ErrorCode, GameId, ProtocolError, Reply, SECRET_KEYWORD,
    ServerLine, valid_secret,
};

/// A guest's secret as the server gave it. It has no `Display`, and its
/// `Debug` hides it, so that it reaches nothing but the `LOGIN` line and the
/// secret file.
#[derive(Clone, PartialEq, Eq)]
pub struct GuestSecret(String);

impl GuestSecret {
    /// A secret of the protocol's shape (letters and digits, bounded), else
    /// `None`.
    pub fn new(token: &str) -> Option<GuestSecret> {
        valid_secret(token).then(|| GuestSecret(token.to_string()))
    }

    /// The token, for the `LOGIN` line and the secret file only.
    pub fn token(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for GuestSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GuestSecret(..)")
    }
}

/// `LOGIN <name> secret <token>`: takes a guest's name back.
pub fn resume_line(name: &str, secret: &GuestSecret) -> String {
    format!("LOGIN {name} {SECRET_KEYWORD} {}", secret.token())
}

/// The name of a guest's `LOGIN name`, with nothing after the name: the
/// line a kept secret may be added to.
pub fn plain_login_name(line: &str) -> Option<String> {
    match Command::parse(line) {
        Ok(Command::Login {
            name,
            credential: None,
        }) => Some(name),
        _ => None,
    }
}

/// The name and the secret a `LOGIN` line shows, if it is one that shows a
/// secret.
pub fn shown_secret(line: &str) -> Option<(String, GuestSecret)> {
    match Command::parse(line) {
        Ok(Command::Login {
            name,
            credential: Some(Credential::Secret(token)),
        }) => Some((name, GuestSecret::new(&token)?)),
        _ => None,
    }
}

/// Whether a typed line shows a password or a secret (`LOGIN name word...`),
/// which must not be kept in the line editor's history. Any `LOGIN` with more
/// than a name counts, well-formed or not.
pub fn shows_credential(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let login = words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(CommandKind::Login.keyword()));
    login && words.nth(1).is_some()
}

/// `line` as drawn while it is typed: a `LOGIN` that shows a password or a
/// secret has every character after the name drawn as `*`, as many as the
/// columns it takes (the editor places the cursor by the line as typed).
/// `None` for a line that shows none.
pub fn masked(line: &str) -> Option<String> {
    if !shows_credential(line) {
        return None;
    }
    let mut shown = String::with_capacity(line.len());
    let mut words = 0;
    let mut in_word = false;
    for c in line.chars() {
        let space = c.is_whitespace();
        if !space && !in_word {
            words += 1;
        }
        in_word = !space;
        if space || words <= 2 {
            shown.push(c);
        } else {
            let columns = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            shown.extend(std::iter::repeat_n('*', columns));
        }
    }
    Some(shown)
}

/// What the reply to a `LOGIN` means for the name and its secret.
#[derive(Debug, PartialEq, Eq)]
pub enum LoginReply {
    /// Logged in as `name`. `secret` takes it back from now on: the one the
    /// reply gave, or the one the `LOGIN` showed when the reply (`OK ann`)
    /// gave none; `None` for a registered name, or from a server that gives
    /// guests no secret.
    LoggedIn {
        /// The name logged in with.
        name: String,
        /// The guest's secret, if any.
        secret: Option<GuestSecret>,
        /// This login registered the name.
        registered: bool,
        /// The game in play whose seat the name kept, not taken back yet.
        seat: Option<GameId>,
    },
    /// The secret the `LOGIN` showed was refused (`ERR 400` or `401`): it is
    /// of no more use, and a plain `LOGIN` may still log in as a new guest.
    SecretRefused(ProtocolError),
    /// Refused for another reason (the name is in use, a wrong password, the
    /// accounts are unavailable).
    Refused(ProtocolError),
    /// A line that is no reply to `LOGIN`.
    Unreadable,
}

/// Reads the reply `line` to a `LOGIN` that showed `showed` (its secret, if
/// it showed one).
pub fn read_login_reply(line: &str, showed: Option<&GuestSecret>) -> LoginReply {
    match ServerLine::parse(line) {
        ServerLine::Err(e) => match (showed, e.code) {
            (Some(_), ErrorCode::BadRequest | ErrorCode::Unauthorized) => {
                LoginReply::SecretRefused(e)
            }
            _ => LoginReply::Refused(e),
        },
        _ => match Reply::parse(CommandKind::Login, line) {
            Ok(Reply::Login(login)) => LoginReply::LoggedIn {
                secret: match &login.secret {
                    Some(token) => GuestSecret::new(token),
                    None => showed.cloned(),
                },
                name: login.name,
                registered: login.registered,
                seat: login.seat,
            },
            _ => LoginReply::Unreadable,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(token: &str) -> GuestSecret {
        GuestSecret::new(token).unwrap_or_else(|| panic!("{token} is a secret"))
    }

    #[test]
    fn a_password_typed_is_drawn_masked_column_for_column() {
        assert_eq!(
            masked("login carol hunter2").as_deref(),
            Some("login carol *******")
        );
        assert_eq!(
            masked("  LOGIN  ann  a b ").as_deref(),
            Some("  LOGIN  ann  * * ")
        );
        assert_eq!(
            masked("login ann pässwörd").as_deref(),
            Some("login ann ********")
        );
        assert_eq!(masked("login ann 秘密").as_deref(), Some("login ann ****"));
        assert_eq!(masked("login ann"), None);
        assert_eq!(masked("say my password"), None);
    }

    proptest::proptest! {
        #[test]
        fn a_masked_line_keeps_the_name_and_hides_every_character_after_it(
            name in "[a-z]{1,8}", password in "\\PC{1,12}"
        ) {
            let password: String = password.chars().filter(|c| !c.is_whitespace()).collect();
            proptest::prop_assume!(!password.is_empty());
            let line = format!("login {name} {password}");
            let shown = masked(&line).unwrap_or_default();
            let prefix = format!("login {name} ");
            proptest::prop_assert!(shown.starts_with(&prefix));
            let rest = shown.get(prefix.len()..).unwrap_or_default();
            proptest::prop_assert!(rest.chars().all(|c| c == '*'), "{}", shown);
            let width = |s: &str| -> usize {
                s.chars().map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)).sum()
            };
            proptest::prop_assert_eq!(width(&shown), width(&line));
        }
    }

    #[test]
    fn a_secret_is_never_printed() {
        let s = secret("0f3a9c");
        assert_eq!(format!("{s:?}"), "GuestSecret(..)");
        assert_eq!(resume_line("ann", &s), "LOGIN ann secret 0f3a9c");
        assert!(GuestSecret::new("0f-3a").is_none());
        assert!(GuestSecret::new("").is_none());
    }

    #[test]
    fn only_a_guests_plain_login_takes_a_kept_secret() {
        assert_eq!(plain_login_name("LOGIN ann").as_deref(), Some("ann"));
        assert_eq!(plain_login_name(" login ann ").as_deref(), Some("ann"));
        assert_eq!(plain_login_name("LOGIN ann tiger"), None);
        assert_eq!(plain_login_name("LOGIN ann secret 0f3a"), None);
        assert_eq!(plain_login_name("LOGIN bad!name"), None);
        assert_eq!(plain_login_name("SEEK"), None);
        let (name, shown) = shown_secret("LOGIN ann secret 0f3a").unwrap_or_else(|| panic!());
        assert_eq!((name.as_str(), shown), ("ann", secret("0f3a")));
        assert_eq!(shown_secret("LOGIN ann tiger"), None);
    }

    #[test]
    fn a_login_with_a_password_or_a_secret_stays_out_of_the_history() {
        assert!(shows_credential("login ann tiger"));
        assert!(shows_credential("LOGIN ann secret 0f3a"));
        assert!(shows_credential("Login  ann  secret bad-token"));
        assert!(!shows_credential("login ann"));
        assert!(!shows_credential("say login ann tiger"));
        assert!(!shows_credential("d3"));
    }

    #[test]
    fn replies_to_a_login_say_what_becomes_of_the_secret() {
        let s = secret("0f3a");
        let logged_in = |name: &str, secret: Option<GuestSecret>| LoginReply::LoggedIn {
            name: name.to_string(),
            secret,
            registered: false,
            seat: None,
        };
        assert_eq!(
            read_login_reply("OK ann secret 0f3a", None),
            logged_in("ann", Some(s.clone()))
        );
        assert_eq!(
            read_login_reply("OK ann secret 77aa", Some(&s)),
            logged_in("ann", Some(secret("77aa")))
        );
        // A resume answered without a secret keeps the one shown.
        assert_eq!(
            read_login_reply("OK ann", Some(&s)),
            logged_in("ann", Some(s.clone()))
        );
        assert_eq!(read_login_reply("OK ann", None), logged_in("ann", None));
        // The words a registration and a kept seat add.
        assert_eq!(
            read_login_reply("OK ann registered", None),
            LoginReply::LoggedIn {
                name: "ann".into(),
                secret: None,
                registered: true,
                seat: None,
            }
        );
        assert_eq!(
            read_login_reply("OK ann seat 12", Some(&s)),
            LoginReply::LoggedIn {
                name: "ann".into(),
                secret: Some(s.clone()),
                registered: false,
                seat: Some(12),
            }
        );
        assert!(matches!(
            read_login_reply("ERR 401 wrong secret for 'ann'", Some(&s)),
            LoginReply::SecretRefused(_)
        ));
        assert!(matches!(
            read_login_reply("ERR 401 wrong password for 'ann'", None),
            LoginReply::Refused(_)
        ));
        assert!(matches!(
            read_login_reply("ERR 409 name 'ann' is in use", Some(&s)),
            LoginReply::Refused(_)
        ));
        assert_eq!(read_login_reply("OK ann bob", None), LoginReply::Unreadable);
        assert_eq!(
            read_login_reply("OK ann secret 0f-3a", None),
            LoginReply::Unreadable
        );
        assert_eq!(read_login_reply("INFO hi", None), LoginReply::Unreadable);
    }
}
