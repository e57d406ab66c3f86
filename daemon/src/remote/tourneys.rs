//! Tournaments on a cluster's nodes: each stays on the node that made it,
//! and a `TOURNEY` command for one this node does not hold is asked of the
//! other nodes (tournament numbers are the cluster's, one node holds each):
//! `LIST` shows every node's, `JOIN`, `LEAVE`, `START` and `SHOW` go to the
//! node that holds the tournament. Its games with a player of another node
//! are made there (`lobby::far_players`).

use std::sync::Arc;
use std::time::Duration;

use flipline::protocol::{ErrorCode, ProtocolError, TourneyCommand};

use super::{RawAnswer, Remote};
use crate::bus::Body;
use crate::messages::{Answer, Name, TourneyAnswer, TourneyFromFar};
use crate::rules::refusal::Refusal;

/// How long a `TOURNEY` command waits for the other nodes.
const ASK_WITHIN: Duration = Duration::from_secs(2);

/// `op` on the bus: its verb and tournament (0 for `LIST`); `NEW` is always
/// the asking node's own.
fn verb_of(op: TourneyCommand) -> Option<(&'static str, u64)> {
    match op {
        TourneyCommand::List => Some(("list", 0)),
        TourneyCommand::Join(id) => Some(("join", id)),
        TourneyCommand::Leave(id) => Some(("leave", id)),
        TourneyCommand::Start(id) => Some(("start", id)),
        TourneyCommand::Show(id) => Some(("show", id)),
        TourneyCommand::New(_) => None,
    }
}

/// The command a verb and tournament from the bus stand for.
fn op_of(verb: &str, id: u64) -> Option<TourneyCommand> {
    Some(match verb {
        "list" => TourneyCommand::List,
        "join" => TourneyCommand::Join(id),
        "leave" => TourneyCommand::Leave(id),
        "start" => TourneyCommand::Start(id),
        "show" => TourneyCommand::Show(id),
        _ => return None,
    })
}

/// An answer about a tournament as the bus carries it, as the lobby gave
/// it: its lines, or a bare `OK`.
fn tourney_answer(raw: RawAnswer) -> Result<TourneyAnswer, ProtocolError> {
    match raw {
        Ok((data, _)) if data.is_empty() => Ok(TourneyAnswer::Done),
        Ok((data, _)) => Ok(TourneyAnswer::Lines(super::listing::events_of(&data))),
        Err((code, message)) => Err(ProtocolError::new(
            ErrorCode::from_number(code).unwrap_or(ErrorCode::Unavailable),
            message,
        )),
    }
}

impl Remote {
    /// `op` of `member` for the other nodes' tournaments (see the module
    /// docs).
    pub(super) async fn far_tourney(
        self: Arc<Self>,
        op: TourneyCommand,
        member: Option<Name>,
    ) -> Result<TourneyAnswer, ProtocolError> {
        let Some((verb, id)) = verb_of(op) else {
            return Err(Refusal::NoTourney(0).into());
        };
        let member = member.map(|m| m.to_string());
        let body = |request| Body::TourneyHere {
            request,
            verb: verb.to_string(),
            id,
            member: member.clone(),
        };
        let answers = self.ask_every_node(ASK_WITHIN, body).await;
        let answers: Vec<_> = answers.into_iter().map(|(_, answer)| answer).collect();
        if let TourneyCommand::List = op {
            let lines = (answers.into_iter().flatten())
                .filter_map(|raw| match tourney_answer(raw) {
                    Ok(TourneyAnswer::Lines(lines)) => Some(lines),
                    _ => None,
                })
                .flatten()
                .collect();
            return Ok(TourneyAnswer::Lines(lines));
        }
        // The node that holds it answers; the others say they do not. One
        // that did not answer may hold it: the command may yet be done.
        let silent = answers.iter().any(Option::is_none);
        let held = (answers.into_iter().flatten())
            .find(|raw| !matches!(raw, Err((404, _))))
            .map(tourney_answer);
        match (held, silent) {
            (Some(answer), _) => answer,
            (None, true) => Err(ProtocolError::new(
                ErrorCode::Unavailable,
                format!("a node did not answer about tournament {id}: try TOURNEY LIST"),
            )),
            (None, false) => Err(Refusal::NoTourney(id).into()),
        }
    }

    /// At another node's request: `TOURNEY <verb> <id>` of its player
    /// `member` for a tournament here.
    pub(super) async fn tourney_here(
        self: Arc<Self>,
        from: String,
        request: u64,
        (verb, id): (String, u64),
        member: Option<String>,
    ) {
        let answer = match op_of(&verb, id) {
            Some(op) => {
                let member = member.map(|m| Name::from(m.as_str()));
                let asked = self.doors.tourney.send(TourneyFromFar { member, op }).await;
                let answered = asked.map_err(super::seats::stopping).and_then(|a| a);
                answered.map(|answer| match answer {
                    TourneyAnswer::Lines(lines) => Answer::listing(&lines),
                    TourneyAnswer::Made(_) | TourneyAnswer::Done => Answer::default(),
                })
            }
            None => Err(ProtocolError::new(
                ErrorCode::BadRequest,
                format!("no tournament command '{verb}'"),
            )),
        };
        self.answer(&from, request, answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_routed_command_reads_back_from_the_bus() {
        for op in [
            TourneyCommand::List,
            TourneyCommand::Join(3),
            TourneyCommand::Leave(4),
            TourneyCommand::Start(5),
            TourneyCommand::Show(6),
        ] {
            let (verb, id) = verb_of(op).unwrap_or(("?", 0));
            assert_eq!(op_of(verb, id), Some(op));
        }
        assert_eq!(op_of("new", 1), None);
    }
}
