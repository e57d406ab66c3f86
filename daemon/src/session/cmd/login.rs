//! `LOGIN`: the password (or the guest rule) is checked first, by the
//! accounts, whose slow parts run on the store's reader thread and the hash
//! threads rather than on this one (the store's each within the deadline); only then is the name claimed in the
//! lobby, which refuses a name another connection holds. The session keeps
//! the name once the lobby has given it: until then `on_line` refuses the
//! commands that need a login.

use std::sync::Arc;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::protocol::{Credential, ErrorCode};

use crate::messages::{Answer, Login, Name};
use crate::session::Session;
use flipline::protocol::Reply;

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
            Some(current) if **current == *name => {
                return self.reply(ctx, Ok(Answer::ok(Reply::Name(name))));
            }
            Some(current) => {
                let message = format!("already logged in as {current}");
                return self.error(ctx, ErrorCode::Conflict, message);
            }
            None => {}
        }
        let accounts = Arc::clone(&self.shared.accounts);
        let deadline = self.shared.live.store_deadline();
        let check = accounts.check(name.clone(), credential, self.peer, deadline);
        ctx.wait(
            check
                .into_actor(self)
                .map(move |checked, act, ctx| match checked {
                    Ok(()) => act.claim_name(ctx, name),
                    Err(e) => act.reply(ctx, Err(e)),
                }),
        );
    }

    /// Takes `name` in the lobby (refused while another connection holds it).
    fn claim_name(&mut self, ctx: &mut Context<Self>, name: String) {
        let name = Name::from(name);
        let login = Login {
            name: Name::clone(&name),
            id: self.id,
        };
        let shared = std::sync::Arc::clone(&self.shared);
        self.ask(ctx, &shared.lobby.login, login, move |act, ctx, result| {
            if result.is_ok() {
                act.name = Some(Box::new(Name::clone(&name)));
                act.shared.admission.logged_in(act.peer);
            }
            act.reply(
                ctx,
                result.map(|()| Answer::ok(Reply::Name(name.to_string()))),
            );
        });
    }
}
