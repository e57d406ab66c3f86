//! `LOGIN`: the password (or the guest rule) is checked first, by the
//! accounts, whose slow parts run on the store's reader thread and the hash
//! threads rather than on this one (the store's each within the deadline; a
//! guest's needs neither: the registered names are in memory); only then is
//! the name claimed in the lobby, which refuses a name another connection
//! holds. The session keeps the name once the lobby has given it: until then
//! `on_line` refuses the commands that need a login.

use std::sync::Arc;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::protocol::{Credential, ErrorCode, ProtocolError, Reason};

use crate::accounts::Checked;
use crate::messages::{Answer, Gone, GuestLogin, GuestSecret, LoggedIn, Login, Name};
use crate::random;
use crate::rules::lobby::Marks;
use crate::session::Session;
use flipline::protocol::{LoginOk, Reply};

impl Session {
    /// `LOGIN`: the password (or the guest rule) first, off this thread, then
    /// the name in the lobby.
    pub(super) fn login(
        &mut self,
        ctx: &mut Context<Self>,
        name: String,
        credential: Option<Credential>,
    ) {
        match self.login_name() {
            Some(current) if current.eq_ignore_ascii_case(&name) => {
                let again = Reply::Login(LoginOk::name(current.to_string()));
                return self.reply(ctx, Ok(Answer::ok(again)));
            }
            Some(current) => {
                let message = format!("already logged in as {current}");
                return self.error(ctx, ErrorCode::Conflict, message);
            }
            None => {}
        }
        if matches!(credential, Some(Credential::Password(_))) && self.passwords_refused() {
            let refusal = self.password_in_the_clear();
            return self.reply(ctx, Err(refusal));
        }
        let guest = match guest_login(credential.as_ref()) {
            Ok(guest) => guest,
            Err(e) => return self.reply(ctx, Err(e)),
        };
        let accounts = Arc::clone(&self.shared.accounts);
        let deadline = self.shared.live.store_deadline();
        let check = accounts.check(name, credential, self.peer, deadline);
        ctx.wait(
            check
                .into_actor(self)
                .map(move |checked, act, ctx| match checked {
                    Ok(Checked::Guest(name)) => {
                        act.claim_name(ctx, name, guest, None, Marks::default());
                    }
                    Ok(Checked::Member(name, marks)) => {
                        act.claim_name(ctx, name, None, None, marks)
                    }
                    Ok(Checked::Unregistered { name, password }) => {
                        act.claim_name(ctx, name, None, Some(password), Marks::default());
                    }
                    Err(e) => act.reply(ctx, Err(e)),
                }),
        );
    }

    /// The answer to a password on the plain port of a server that takes
    /// passwords there from its own machine only: where to send it instead.
    /// (The password has crossed the network once; it is never checked
    /// here, so a listener learns nothing of whether it was right.)
    fn password_in_the_clear(&self) -> ProtocolError {
        let message = match self.shared.tls_port.get() {
            Some(tls) => format!(
                "passwords are taken only over TLS here: connect to port {} \
                 (flip --server tls://HOST:{}); guests may play on this port",
                tls.port(),
                tls.port()
            ),
            None => {
                "passwords are taken on this port only from the server's own machine".to_string()
            }
        };
        ProtocolError::new(
            ErrorCode::Forbidden,
            Reason::TlsRequired.append_to(&message),
        )
    }

    /// Takes `name` in the lobby (refused while another connection holds it,
    /// or while it is held for a guest that did not show its secret), then,
    /// with a `password` to register, registers it.
    fn claim_name(
        &mut self,
        ctx: &mut Context<Self>,
        name: String,
        guest: Option<GuestLogin>,
        password: Option<String>,
        marks: Marks,
    ) {
        let as_guest = guest.is_some();
        let guest_shown = guest;
        let login = Login {
            name: Name::from(name),
            id: self.id,
            guest,
            marks,
        };
        let shared = std::sync::Arc::clone(&self.shared);
        self.ask(ctx, &shared.lobby.login, login, move |act, ctx, result| {
            let logged_in = match result {
                Ok(logged_in) => logged_in,
                Err(e) => return act.reply(ctx, Err(e)),
            };
            act.name = Some(Box::new(Name::clone(&logged_in.name)));
            act.shared.admission.logged_in(act.peer);
            if as_guest && let Err(e) = act.shared.accounts.still_free(&logged_in.name) {
                act.give_name_back();
                return act.reply(ctx, Err(e));
            }
            match act.shared.clustered {
                true => act.claim_in_cluster(ctx, (logged_in, guest_shown), password),
                false => act.welcome_in(ctx, logged_in, password),
            }
        });
    }

    /// The name is this connection's: a name to register is registered,
    /// else the login is answered.
    pub(super) fn welcome_in(
        &mut self,
        ctx: &mut Context<Self>,
        logged_in: LoggedIn,
        password: Option<String>,
    ) {
        let guest = logged_in.secret.is_some();
        tracing::info!(id = self.id, name = %logged_in.name, guest, peer = %self.peer, "logged in");
        match password {
            Some(password) => self.register(ctx, logged_in.name, password),
            None => self.reply(ctx, Ok(Answer::ok(welcome(logged_in)))),
        }
    }

    /// Registers the name this connection now holds; if that fails, the name
    /// is given back (nobody has it registered, nobody holds it).
    fn register(&mut self, ctx: &mut Context<Self>, name: Name, password: String) {
        let accounts = Arc::clone(&self.shared.accounts);
        let deadline = self.shared.live.store_deadline();
        let registered = accounts.register(name.to_string(), password, self.peer, deadline);
        ctx.wait(
            registered
                .into_actor(self)
                .map(move |registered, act, ctx| match registered {
                    Ok(()) => {
                        let registered = LoginOk {
                            registered: true,
                            ..LoginOk::name(name.to_string())
                        };
                        act.reply(ctx, Ok(Answer::ok(Reply::Login(registered))));
                    }
                    Err(e) => {
                        act.give_name_back();
                        act.reply(ctx, Err(e));
                    }
                }),
        );
    }

    /// Gives the name this connection holds back to the lobby (nobody holds
    /// it then); the connection stays the lobby's to reach.
    pub(super) fn give_name_back(&mut self) {
        self.release_in_cluster();
        let gone = Gone {
            id: self.id,
            name: self.name.take().map(|name| *name),
            closed: false,
        };
        self.shared.lobby.gone.do_send(gone);
        self.shared.admission.logged_out(self.peer);
    }
}

/// The `OK` of a login the lobby let through: a guest's with its secret,
/// and the game whose seat the name kept, if any.
pub(super) fn welcome(logged_in: LoggedIn) -> Reply {
    Reply::Login(LoginOk {
        name: logged_in.name.to_string(),
        secret: logged_in.secret.map(|secret| secret.to_string()),
        registered: false,
        seat: logged_in.kept_seat,
    })
}

/// What the lobby hears of a login without a password: a guest, with the
/// secret it showed (a malformed one shows none) and a fresh one, drawn now
/// in case the name is free. `None` for a password: the accounts decide.
fn guest_login(credential: Option<&Credential>) -> Result<Option<GuestLogin>, ProtocolError> {
    let shown = match credential {
        Some(Credential::Password(_)) => return Ok(None),
        Some(Credential::Secret(shown)) => GuestSecret::parse(shown),
        None => None,
    };
    let fresh = random::guest_secret().ok_or_else(|| {
        tracing::error!("the system gave no random bytes for a guest's secret");
        ProtocolError::new(
            ErrorCode::Unavailable,
            "guests are not available, try again",
        )
    })?;
    Ok(Some(GuestLogin { shown, fresh }))
}
