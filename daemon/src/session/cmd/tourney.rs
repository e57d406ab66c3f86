//! `TOURNEY`: the lobby runs the tournaments; the session asks and shows
//! the answer (`OK <tourney>` for `NEW`, the lines of `LIST` and `SHOW`).

use actix::Context;
use flipline::protocol::{Reply, TourneyCommand};

use crate::messages::{Answer, TourneyAnswer, TourneyOp};
use crate::session::Session;

impl Session {
    pub(super) fn tourney(&mut self, ctx: &mut Context<Self>, op: TourneyCommand) {
        let msg = TourneyOp {
            name: self.login_name().cloned(),
            op,
        };
        self.ask_lobby(
            ctx,
            |l| &l.tourney,
            msg,
            |_, answer| match answer {
                TourneyAnswer::Made(id) => Answer::ok(Reply::Tourney(id)),
                TourneyAnswer::Done => Answer::default(),
                TourneyAnswer::Lines(lines) => {
                    let data: String = lines.iter().map(|e| format!("{e}\n")).collect();
                    Answer::data(data)
                }
            },
        );
    }
}
