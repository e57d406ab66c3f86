//! After a cut of the bus: what each side holds for the other is made the
//! same again. While a node's link to NATS is down, messages either way
//! are lost: a player's `Away` (its connection closed), a watcher's
//! `Unwatch`, the lines of its game, a seek. Once the link is back:
//!
//! - the node tells every node (`Back`), takes its seats and watches
//!   elsewhere again (the snapshots come, numbered on), and tells the
//!   leader its seeks again;
//! - each other node sends it its `Roster` (which of its connections sit
//!   at or watch the returning node's games) and takes its own seats and
//!   watches there again; the returning node answers with its own roster;
//! - a roster drops what the receiver holds for connections of the sender
//!   that the roster does not list: a player whose `Away` was lost starts
//!   its seat's grace there, as if its `Away` had come, so that the name
//!   is free again and the game ends by abandon if nobody comes back.
//!
//! - the names held here for games elsewhere (a seat there, or kept since a
//!   login) are checked against the store: a game over whose `Over` was
//!   lost in the cut lets its names go, as its `Over` would have.
//!
//! A roster is sent on the receiver's own subject, after anything sent
//! there before it: a seat asked for before it is listed (the view here is
//! made before its `Sit` goes), one asked for after it arrives after it.

use std::collections::HashMap;
use std::sync::Arc;

use flipline::protocol::GameId;

use super::{Remote, lock};
use crate::bus::Body;
use crate::messages::{BackFromAway, Name, Reannounce};

impl Remote {
    /// The link to NATS is up (again): everything may have been lost both
    /// ways while it was down.
    pub(super) fn link_up(self: &Arc<Self>) {
        self.bus.broadcast(Body::Back);
        self.doors.reannounce.do_send(Reannounce);
        self.take_seats_again(None);
        tokio::spawn(Arc::clone(self).over_while_cut());
    }

    /// The games elsewhere that names here are held for, which the store
    /// says are over: their `Over` was lost while the link was down.
    async fn over_while_cut(self: Arc<Self>) {
        // Each game read once, with the names here seated there.
        let mut held: HashMap<GameId, Vec<Name>> = (lock(&self.kept).keys())
            .map(|&game| (game, Vec::new()))
            .collect();
        for view in lock(&self.players).values() {
            held.entry(view.game)
                .or_default()
                .push(Name::clone(&view.name));
        }
        for (game, names) in held {
            match self.store.owner_of(game).await {
                // Neither open nor in play: over.
                Ok(None) => {
                    tracing::info!(game, "a game over while the bus was cut: its names go free");
                    self.over_there(game);
                    for name in names {
                        self.doors.back.do_send(BackFromAway { name, game });
                    }
                }
                Ok(Some(_)) => {}
                Err(error) => tracing::warn!(%error, game, "a game held here could not be read"),
            }
        }
    }

    /// Node `from`'s link is back: it hears what this node's connections
    /// hold there, and the seats and watches there are taken again (their
    /// lines may have been lost).
    pub(super) fn back(self: &Arc<Self>, from: &str) {
        if from == self.bus.node() {
            return;
        }
        self.bus.send(from, self.roster_for(from, true));
        self.take_seats_again(Some(from));
        if self
            .counts
            .leader()
            .is_some_and(|(leader, _)| leader == from)
        {
            self.doors.reannounce.do_send(Reannounce);
        }
    }

    /// What this node's connections hold on `owner`, as a roster.
    fn roster_for(&self, owner: &str, answer: bool) -> Body {
        let players = (lock(&self.players).iter())
            .filter(|(_, view)| view.owner == owner)
            .map(|(&conn, _)| conn)
            .collect();
        let watchers = (lock(&self.views).iter())
            .filter(|(_, view)| view.owner == owner)
            .map(|(&(conn, game), _)| (conn, game))
            .collect();
        Body::Roster {
            players,
            watchers,
            answer,
        }
    }

    /// `from`'s roster: what this node holds for connections of `from`
    /// that it does not list goes.
    pub(super) fn roster(
        self: &Arc<Self>,
        from: &str,
        (players, watchers): (&[u64], &[(u64, u64)]),
        answer: bool,
    ) {
        let gone: Vec<u64> = (lock(&self.seated).keys())
            .filter(|(node, conn)| node == from && !players.contains(conn))
            .map(|&(_, conn)| conn)
            .collect();
        for conn in gone {
            tracing::info!(
                from,
                conn,
                "a player of another node gone while the bus was cut: its seat's grace starts"
            );
            self.drop_player(from, conn);
        }
        let unwatched: Vec<(u64, u64)> = (lock(&self.far).keys())
            .filter(|(node, conn, game)| node == from && !watchers.contains(&(*conn, *game)))
            .map(|&(_, conn, game)| (conn, game))
            .collect();
        for (conn, game) in unwatched {
            tokio::spawn(Arc::clone(self).unwatched(from.to_string(), game, conn));
        }
        if answer {
            self.bus.send(from, self.roster_for(from, false));
        }
    }

    /// Takes every seat and watch of this node's connections on `owner`
    /// (`None`: on any node) again: the snapshot follows, numbered on.
    fn take_seats_again(&self, owner: Option<&str>) {
        let on = |node: &str| owner.is_none_or(|owner| owner == node);
        for (&conn, view) in lock(&self.players).iter() {
            if on(&view.owner) {
                self.bus.send(&view.owner, view.sit_again(conn, None));
            }
        }
        for (&(conn, game), view) in lock(&self.views).iter() {
            if on(&view.owner) {
                let watch = Body::Watch {
                    request: 0,
                    game,
                    conn,
                };
                self.bus.send(&view.owner, watch);
            }
        }
    }
}
