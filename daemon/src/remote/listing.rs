//! `LIST` and `WHO` on a cluster's node: this node's answer and every
//! other live node's (as the lease keeper last read them), merged as one
//! node would answer (`rules::listing`). A node that does not answer within
//! [`GATHER_WITHIN`] is left out, and the answer says so.

use std::sync::Arc;
use std::time::Duration;

use actix::{Context, Handler, ResponseFuture};
use flipline::protocol::{Event, ListQuery, ProtocolError, ServerLine, WhoQuery};

use super::{Directory, RawAnswer, Remote, lock};
use crate::bus::Body;
use crate::messages::{Answer, Answered, ListGames, ListPlayers};
use crate::rules::listing::{PAGE, merge_games, merge_players};
use crate::rules::refusal::Refusal;

/// How long a `LIST` or `WHO` waits for the other nodes.
const GATHER_WITHIN: Duration = Duration::from_secs(1);

impl Handler<ListGames> for Directory {
    type Result = ResponseFuture<Vec<Event>>;

    fn handle(&mut self, ListGames(query): ListGames, _: &mut Context<Self>) -> Self::Result {
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let here = remote.doors.list_games.send(ListGames(query));
            let asked = query.to_string();
            let body = move |request| Body::ListHere {
                request,
                query: asked.clone(),
            };
            let pages = remote.pages(here, body).await;
            merge_games(pages, PAGE, |next| query.resumed_at(next).to_string())
        })
    }
}

impl Handler<ListPlayers> for Directory {
    type Result = ResponseFuture<Vec<Event>>;

    fn handle(&mut self, ListPlayers(query): ListPlayers, _: &mut Context<Self>) -> Self::Result {
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let here = remote.doors.list_players.send(ListPlayers(query.clone()));
            let asked = query.to_string();
            let body = move |request| Body::WhoHere {
                request,
                query: asked.clone(),
            };
            let pages = remote.pages(here, body).await;
            merge_players(pages, PAGE, |next| {
                WhoQuery { from: Some(next) }.to_string()
            })
        })
    }
}

impl Remote {
    /// This node's page (`here`, its lobby's answer) and every other live
    /// node's (asked with `body`).
    async fn pages(
        self: &Arc<Self>,
        here: impl Future<Output = Result<Vec<Event>, actix::MailboxError>>,
        body: impl Fn(u64) -> Body,
    ) -> Vec<Vec<Event>> {
        let (here, mut pages) = futures_util::future::join(here, self.gather(body)).await;
        pages.push(here.unwrap_or_default());
        pages
    }

    /// Asks every other live node (`body`, numbered with its request) and
    /// waits at most [`GATHER_WITHIN`]: each node's lines, or a line saying
    /// it did not answer.
    async fn gather(self: &Arc<Self>, body: impl Fn(u64) -> Body) -> Vec<Vec<Event>> {
        let answers = self.ask_every_node(GATHER_WITHIN, body).await;
        (answers.into_iter())
            .map(|(peer, answer)| match answer {
                Some(Ok((data, _))) => events_of(&data),
                _ => {
                    let note = format!("node {peer} did not answer: what it holds is not listed");
                    vec![Event::Info(note)]
                }
            })
            .collect()
    }

    /// Asks every other live node (`body`, numbered with its request) and
    /// waits at most `within`: each node and its answer, or none if it did
    /// not answer in time.
    pub(super) async fn ask_every_node(
        self: &Arc<Self>,
        within: Duration,
        body: impl Fn(u64) -> Body,
    ) -> Vec<(String, Option<RawAnswer>)> {
        let asked: Vec<_> = (self.counts.peers().into_iter())
            .map(|peer| {
                let (request, answer) = self.pending_request();
                self.bus.send(&peer, body(request));
                async move { (peer, request, tokio::time::timeout(within, answer).await) }
            })
            .collect();
        let answers = futures_util::future::join_all(asked).await;
        (answers.into_iter())
            .map(|(peer, request, answer)| match answer {
                Ok(Ok(raw)) => (peer, Some(raw)),
                _ => {
                    lock(&self.pending).remove(&request);
                    (peer, None)
                }
            })
            .collect()
    }

    /// At another node's request: `LIST` here (`query`: the command line).
    pub(super) async fn listed_here(self: Arc<Self>, from: String, request: u64, query: String) {
        let result = match ListQuery::parse(&mut query.split_whitespace().skip(1)) {
            Ok(query) => listed(self.doors.list_games.send(ListGames(query)).await),
            Err(e) => Err(e),
        };
        self.answer(&from, request, result);
    }

    /// At another node's request: `WHO` here (`query`: the command line).
    pub(super) async fn who_here(self: Arc<Self>, from: String, request: u64, query: String) {
        let result = match WhoQuery::parse(&mut query.split_whitespace().skip(1)) {
            Ok(query) => listed(self.doors.list_players.send(ListPlayers(query)).await),
            Err(e) => Err(e),
        };
        self.answer(&from, request, result);
    }
}

/// A lobby's lines as an answer: the lines, and their count.
fn listed(events: Result<Vec<Event>, actix::MailboxError>) -> Answered {
    let events = events.map_err(|_| ProtocolError::from(Refusal::GameGone))?;
    Ok(Answer::listing(&events))
}

/// The events among `data`'s lines.
pub(super) fn events_of(data: &str) -> Vec<Event> {
    (data.lines())
        .filter_map(|line| match ServerLine::parse(line) {
            ServerLine::Event(event) => Some(event),
            _ => None,
        })
        .collect()
}
