//! The lobby actor's side of seats on other nodes of a cluster: a name
//! logged in here that sits at a game another node owns is held here as a
//! seat here would hold it (the core decides: `LobbyCore::sit_away`), so
//! that nobody sits in two games in play.

use actix::{Context, Handler, ResponseFuture};
use flipline::protocol::ProtocolError;
use tokio::sync::oneshot;

use super::{Lobby, answered, touching};
use crate::messages::{AwayPass, BackFromAway, SitAway};

impl Handler<SitAway> for Lobby {
    type Result = ResponseFuture<Result<AwayPass, ProtocolError>>;

    fn handle(&mut self, msg: SitAway, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let decided = act.core.sit_away(&msg.name, msg.game);
            act.conclude(ctx, decided, reply, |_, pass| Ok(pass));
        });
        answered(answer)
    }
}

impl Handler<BackFromAway> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: BackFromAway, ctx: &mut Context<Self>) {
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, _| {
            act.core.back_from_away(&msg.name, msg.game);
        });
    }
}
