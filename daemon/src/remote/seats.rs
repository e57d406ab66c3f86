//! Players of a game on another node of the cluster: a connection here
//! sits at a game another node owns, and a connection elsewhere sits at a
//! game here.
//!
//! - At the owner, the player is a [`FarSession`] that the lobby knows as
//!   a connection like any other, logged in with the name and the way it
//!   logged in on its own node ([`FarPass`]: the nodes trust each other's
//!   password checks), so that the lobby and the game treat it as they
//!   treat a connection here (seats, grace after a disconnect, rematches).
//!   What it hears goes over the bus, numbered per player.
//! - Here, the player's route is a `RemoteGame` whose commands go to the
//!   owner ([`Body::Act`]); the lines come back in order, a number missing
//!   asks for the seat again (`JOIN` of one's own seat: the snapshot).
//! - The lobby here holds the name for the game away (`SitAway`), so that
//!   nobody sits in two games in play; it lets go once the game is over
//!   (its `OVER` passes here) or the seat is refused.

use std::sync::{Arc, Mutex};

use flipline::protocol::{ErrorCode, Event, GameId, ProtocolError, Reply, ServerLine};

use super::{RawAnswer, Remote, lock};
use crate::bus::{Body, FarAct, FarPass, FarSession, PlayerNews, Plies, Resend};
use crate::messages::{
    Action, Answer, Answered, AwayPass, BackFromAway, Connected, Find, Gone, GuestLogin,
    GuestSecret, Join, Keyed, Leave, Login, Name, Rematch, SitAway, ToGame, ToSession,
};
use crate::rules::lobby::Marks;
use crate::rules::refusal::Refusal;
use crate::session::{Reach, SeatRef, SessionRef};

/// A player of another node seated here.
pub(super) struct FarPlayer {
    session: Arc<FarSession>,
    name: Name,
    /// The route to the game it sits at here, once found.
    route: Mutex<Option<SeatRef>>,
}

/// A player here seated at a game elsewhere.
pub(super) struct PlayerView {
    session: SessionRef,
    pub(super) name: Name,
    pass: FarPass,
    pub(super) owner: String,
    /// The game it sits at there (a rematch moves it on).
    pub(super) game: GameId,
    /// The number of the next news expected from the owner.
    expected: u64,
    /// Where its game stood by the owner's last lines: the game and its
    /// plies (what a move is keyed by, should it be sent again).
    stamp: Option<(GameId, u32)>,
    /// Its last command that may be sent again to a new owner, while
    /// unanswered (see [`Remote::players_follow`]).
    in_flight: Option<Resend>,
}

impl PlayerView {
    /// The seat of the player on `conn` taken again, unanswered: the
    /// snapshot follows, then the answer to `resend`, if given.
    pub(super) fn sit_again(&self, conn: u64, resend: Option<Resend>) -> Body {
        Body::Sit {
            request: 0,
            conn,
            game: self.game,
            pass: self.pass.clone(),
            resend,
        }
    }

    /// The plies of its game that its player has heard of, if known.
    fn plies_heard(&self) -> Option<u32> {
        self.stamp
            .filter(|(game, _)| *game == self.game)
            .map(|(_, plies)| plies)
    }
}

/// Whether `act`, unanswered by an owner that died, is sent again to the
/// new owner after the snapshot: a move or a take-back keyed by the plies
/// heard (never carried out twice); `END` (a game taken over is in play,
/// so its resignation was not stored), `QUIT` and the commands that change
/// nothing; `SAY` (a line may be heard twice rather than lost). `REMATCH`
/// and `LEAVE` are asked of the lobby there, again as they are.
fn resendable(act: &FarAct, at: Option<u32>) -> bool {
    match act {
        FarAct::Move(_) | FarAct::Pass | FarAct::Undo => at.is_some(),
        FarAct::Resign | FarAct::Quit | FarAct::Say(_) | FarAct::Board | FarAct::Hint => true,
        FarAct::Rematch | FarAct::Leave => false,
    }
}

/// A player's command sent to its game's owner: the request's number, its
/// answer to come, and what asks it again (its connection, the command and
/// the plies its player had heard of).
pub(super) struct Asked {
    pub request: u64,
    pub answer: tokio::sync::oneshot::Receiver<RawAnswer>,
    pub again: Option<(u64, FarAct, Option<u32>)>,
}

/// A seat here asked of the owner.
pub(super) struct SitRequest {
    pub request: u64,
    /// Whether this request made the player's view here (a refusal then
    /// drops it).
    pub fresh: bool,
}

impl FarPass {
    /// The pass for `name`, which logged in here as `pass` says.
    pub fn of(name: &Name, pass: AwayPass) -> FarPass {
        FarPass {
            name: name.to_string(),
            secret: pass.secret.map(|s| s.to_string()),
            member: pass.member,
            rating: pass.marks.rating,
            bot: pass.marks.bot,
        }
    }

    /// The login at the owner: a registered name's (its password was
    /// checked on its node) or a guest's with its secret.
    fn login(&self, id: u64) -> Result<Login, ProtocolError> {
        let guest = match (self.member, self.secret.as_deref().map(GuestSecret::parse)) {
            (true, _) => None,
            (false, Some(Some(secret))) => Some(GuestLogin {
                shown: Some(secret),
                fresh: secret,
            }),
            (false, _) => {
                return Err(ProtocolError::new(
                    ErrorCode::Unavailable,
                    "a guest's seat elsewhere needs its secret: LOGIN again",
                ));
            }
        };
        Ok(Login {
            name: Name::from(self.name.as_str()),
            id,
            guest,
            marks: Marks {
                rating: self.rating,
                bot: self.bot,
            },
        })
    }
}

impl FarAct {
    /// What `action` is on the bus.
    pub fn of(action: &Action) -> FarAct {
        match action {
            Action::Move(square) => FarAct::Move(square.to_string()),
            Action::Pass => FarAct::Pass,
            Action::Resign => FarAct::Resign,
            Action::Undo => FarAct::Undo,
            Action::Board => FarAct::Board,
            Action::Say(text) => FarAct::Say(text.clone()),
            Action::Quit => FarAct::Quit,
        }
    }

    /// `mv` on the bus.
    pub fn of_move(mv: flipline::Move) -> FarAct {
        match mv {
            flipline::Move::Place(square) => FarAct::Move(square.to_string()),
            flipline::Move::Pass => FarAct::Pass,
        }
    }

    /// The move it is, if it is one (`MOVE` or `PASS`).
    pub fn as_move(&self) -> Option<flipline::Move> {
        match self {
            FarAct::Move(square) => square.parse().ok().map(flipline::Move::Place),
            FarAct::Pass => Some(flipline::Move::Pass),
            _ => None,
        }
    }

    /// The command keyed by its ply it is, if it is one (a move, `UNDO`).
    pub fn as_keyed(&self) -> Option<Keyed> {
        match self {
            FarAct::Undo => Some(Keyed::Undo),
            _ => self.as_move().map(Keyed::Move),
        }
    }

    /// The keyed command `act`.
    pub fn of_keyed(act: Keyed) -> FarAct {
        match act {
            Keyed::Move(mv) => FarAct::of_move(mv),
            Keyed::Undo => FarAct::Undo,
        }
    }

    /// The command it answers, to read the answer back.
    pub fn kind(&self) -> flipline::protocol::CommandKind {
        use flipline::protocol::CommandKind as K;
        match self {
            FarAct::Move(_) => K::Move,
            FarAct::Pass => K::Pass,
            FarAct::Resign => K::End,
            FarAct::Undo => K::Undo,
            FarAct::Board => K::Board,
            FarAct::Say(_) => K::Say,
            FarAct::Quit => K::Quit,
            FarAct::Hint => K::Hint,
            FarAct::Rematch => K::Rematch,
            FarAct::Leave => K::Leave,
        }
    }

    /// What the game here is asked, `None` for `REMATCH` and `LEAVE` (the
    /// lobby's).
    fn to_game(&self, name: Name) -> Result<Option<ToGame<SessionRef>>, ProtocolError> {
        let action = match self {
            FarAct::Move(square) => Action::Move(square.parse().map_err(|_| {
                ProtocolError::new(ErrorCode::BadRequest, format!("no square {square:?}"))
            })?),
            FarAct::Pass => Action::Pass,
            FarAct::Resign => Action::Resign,
            FarAct::Undo => Action::Undo,
            FarAct::Board => Action::Board,
            FarAct::Say(text) => Action::Say(text.clone()),
            FarAct::Quit => Action::Quit,
            FarAct::Hint => return Ok(Some(ToGame::Hint { name })),
            FarAct::Rematch | FarAct::Leave => return Ok(None),
        };
        Ok(Some(ToGame::Play { name, action }))
    }
}

/// An answer as the bus carries it.
fn raw(result: Answered) -> RawAnswer {
    result
        .map(|answer| (answer.data, answer.ok.to_string()))
        .map_err(|e| (e.code.number(), e.message))
}

/// `resend`, a command of `name` that the game's dead owner left
/// unanswered, played at `seat` (the game's new owner's): a move or `UNDO`
/// keyed by the plies its player heard, the rest as they are.
async fn replay_at(seat: &SeatRef, name: &Name, resend: Resend) -> Answered {
    let name = Name::clone(name);
    let request = match (resend.act.as_keyed(), resend.at) {
        (Some(act), Some(at)) => ToGame::Again { name, act, at },
        _ => match resend.act.to_game(name)? {
            Some(request) => request,
            None => return Err(Refusal::NotInGame.into()),
        },
    };
    (seat.tx.send(request).await).unwrap_or_else(|_| Err(Refusal::GameGone.into()))
}

/// What stamps a far player's lines with `seat`'s plies (weakly: the game
/// holds the player's session).
fn plies_of(seat: &SeatRef) -> std::sync::Weak<dyn Plies> {
    Arc::downgrade(seat) as std::sync::Weak<dyn Plies>
}

/// The refusal when the lobby is gone: the daemon is stopping.
pub(super) fn stopping(_: actix::MailboxError) -> ProtocolError {
    ProtocolError::new(ErrorCode::Unavailable, "the daemon is stopping")
}

/// Whether `text` holds the `OVER` of `game`.
fn ends(text: &str, game: GameId) -> bool {
    text.lines().any(|line| {
        line.starts_with("OVER ")
            && matches!(ServerLine::parse(line), ServerLine::Event(Event::Over { game: g, .. }) if g == game)
    })
}

// ---- at the owner ----

impl Remote {
    /// At the owner: connection `conn` of node `from` takes its seat at
    /// `game` here (`request` 0: again, for the snapshot; not answered).
    pub(super) async fn sat(
        self: Arc<Self>,
        from: String,
        (request, conn, game): (u64, u64, GameId),
        pass: FarPass,
        resend: Option<Resend>,
    ) {
        let (player, fresh) = self.far_player(&from, conn, &pass.name);
        if fresh {
            self.doors.connected.do_send(Connected {
                id: player.session.id,
                session: SessionRef::Far(Arc::clone(&player.session)),
                worker: self.doors.worker.clone(),
            });
        }
        let result = self.seat_far(&player, game, &pass).await;
        if result.is_err() && fresh {
            self.drop_player(&from, conn);
        }
        let seated = result.is_ok();
        if request != 0 {
            self.answer(&from, request, result);
        }
        // A command its last owner left unanswered, after the snapshot
        // (unless its asking again came first).
        if let Some(resend) = resend {
            let request = resend.request;
            if !self.take_up(&from, request) {
                return;
            }
            let replayed = match seated {
                true => self.act_again(&player, game, resend).await,
                false => Err(Refusal::NotInGame.into()),
            };
            self.answer(&from, request, replayed);
        }
    }

    /// At the owner: `resend`, a command of `player` that the game's last
    /// owner left unanswered: a move keyed by the plies its player heard.
    async fn act_again(&self, player: &FarPlayer, game: GameId, resend: Resend) -> Answered {
        self.counts.remote_resent();
        let route = self.route_of(player, game).await?;
        replay_at(&route, &player.name, resend).await
    }

    /// The player of `from` on `conn` known as `name`: the one seated here
    /// already, or a new one (`true`). A different name on the same
    /// connection number is a new connection there: the old one goes.
    fn far_player(&self, from: &str, conn: u64, name: &str) -> (Arc<FarPlayer>, bool) {
        let key = (from.to_string(), conn);
        if let Some(known) = lock(&self.seated).get(&key)
            && known.name.eq_ignore_ascii_case(name)
        {
            return (Arc::clone(known), false);
        }
        self.drop_player(from, conn);
        let id = self.next_far_id();
        let session = FarSession::new(self.bus.clone(), from, conn, None, id);
        let player = Arc::new(FarPlayer {
            session: Arc::new(session),
            name: Name::from(name),
            route: Mutex::default(),
        });
        lock(&self.seated).insert(key, Arc::clone(&player));
        (player, true)
    }

    /// Logs the player in here and seats it at `game`.
    async fn seat_far(&self, player: &FarPlayer, game: GameId, pass: &FarPass) -> Answered {
        let login = pass.login(player.session.id)?;
        let logged_in = self.doors.login.send(login).await.map_err(stopping)??;
        let join = Join {
            name: logged_in.name,
            game,
            route: std::marker::PhantomData,
        };
        let (seat, color) = self.doors.join.send(join).await.map_err(stopping)??;
        player.session.sits_at(plies_of(&seat));
        *lock(&player.route) = Some(seat);
        Ok(Answer::ok(Reply::Joined(game, color)))
    }

    /// At the owner: the player of `from` on `conn` is gone from here (its
    /// connection closed, or its node): the lobby keeps its seat in play
    /// for the grace period.
    pub(super) fn drop_player(&self, from: &str, conn: u64) {
        let Some(player) = lock(&self.seated).remove(&(from.to_string(), conn)) else {
            return;
        };
        player.session.close();
        self.doors.gone.do_send(Gone {
            id: player.session.id,
            name: Some(Name::clone(&player.name)),
            closed: true,
        });
    }

    /// At the owner: everything connections of `nodes` held here goes.
    pub(super) fn forget_nodes(self: &Arc<Self>, nodes: &[String]) {
        self.forget_seeks_of(nodes);
        self.makers_gone(nodes);
        let gone = crate::messages::FarNodesGone(nodes.to_vec());
        self.doors.nodes_gone.do_send(gone);
        let players: Vec<(String, u64)> = (lock(&self.seated).keys())
            .filter(|(node, _)| nodes.contains(node))
            .cloned()
            .collect();
        for (node, conn) in players {
            self.drop_player(&node, conn);
        }
        let watchers: Vec<_> = (lock(&self.far).keys())
            .filter(|(node, _, _)| nodes.contains(node))
            .cloned()
            .collect();
        for (node, conn, game) in watchers {
            tokio::spawn(Arc::clone(self).unwatched(node, game, conn));
        }
    }

    /// At the owner: a command of the player of `from` on `conn`, seated
    /// at `game` here; asked `again` (see [`Body::Act`]) by a node whose
    /// first asking this node does not know: a move or `UNDO` only at ply
    /// `at`, and
    /// nothing answered while the player has no seat here yet.
    pub(super) async fn acted(
        self: Arc<Self>,
        from: String,
        (request, conn, game): (u64, u64, GameId),
        act: FarAct,
        (again, at): (bool, Option<u32>),
    ) {
        let player = lock(&self.seated).get(&(from.clone(), conn)).cloned();
        let result = match (player, act) {
            // A move or take-back asked again, unknown here: carried out
            // only at its ply.
            (Some(player), act) if again && act.as_keyed().is_some() => {
                let resend = Resend { request, act, at };
                self.act_again(&player, game, resend).await
            }
            (Some(player), act) => self.act_here(&player, game, &act).await,
            // A spectator there: any name reads the board.
            (None, FarAct::Board) => self.board_here(game).await,
            // Not seated here yet (its seat follows a takeover): the seat's
            // own resending, or the next asking, answers it.
            (None, _) if again => {
                lock(&self.served).let_go(&from, request);
                return;
            }
            (None, _) => Err(Refusal::NotInGame.into()),
        };
        self.answer(&from, request, result);
    }

    /// `BOARD` of `game` here, for a spectator elsewhere.
    async fn board_here(&self, game: GameId) -> Answered {
        let found = self.find.send(Find(game, std::marker::PhantomData)).await;
        let route = found.ok().flatten().ok_or(Refusal::NoGame(game))?;
        let board = ToGame::Play {
            name: Name::from(""),
            action: Action::Board,
        };
        (route.tx.send(board).await).unwrap_or_else(|_| Err(Refusal::GameGone.into()))
    }

    async fn act_here(&self, player: &FarPlayer, game: GameId, act: &FarAct) -> Answered {
        let Some(msg) = act.to_game(Name::clone(&player.name))? else {
            return match act {
                FarAct::Leave => self.leave_here(player).await,
                _ => self.rematch_here(player).await,
            };
        };
        let route = self.route_of(player, game).await?;
        route
            .tx
            .send(msg)
            .await
            .unwrap_or_else(|_| Err(Refusal::GameGone.into()))
    }

    /// `LEAVE` of a player seated here: its seat, unless in play.
    async fn leave_here(&self, player: &FarPlayer) -> Answered {
        let leave = Leave {
            name: Name::clone(&player.name),
            watching: false,
        };
        self.doors.leave.send(leave).await.map_err(stopping)??;
        *lock(&player.route) = None;
        Ok(Answer::default())
    }

    /// `REMATCH` of a player seated here: the new game's number, or
    /// waiting.
    async fn rematch_here(&self, player: &FarPlayer) -> Answered {
        let rematch = Rematch {
            name: Name::clone(&player.name),
            route: std::marker::PhantomData,
        };
        let seat = self.doors.rematch.send(rematch).await.map_err(stopping)??;
        let Some(seat) = seat else {
            return Ok(Answer::ok(Reply::Waiting));
        };
        let game = seat.game;
        player.session.sits_at(plies_of(&seat));
        *lock(&player.route) = Some(seat);
        Ok(Answer::ok(Reply::Game(game)))
    }

    /// The route to `game`, where `player` sits.
    async fn route_of(&self, player: &FarPlayer, game: GameId) -> Result<SeatRef, ProtocolError> {
        let known = lock(&player.route).clone().filter(|r| r.game == game);
        if let Some(route) = known {
            return Ok(route);
        }
        let found = self.find.send(Find(game, std::marker::PhantomData)).await;
        let route = found.ok().flatten().ok_or(Refusal::NotInGame)?;
        *lock(&player.route) = Some(Arc::clone(&route));
        Ok(route)
    }

    /// Answers request `request` of `from`.
    pub(super) fn answer(&self, from: &str, request: u64, result: Answered) {
        self.counts.remote_served();
        let result = raw(result);
        lock(&self.served).answered(from, request, &result);
        self.bus.send(from, Body::Answer { request, result });
    }
}

// ---- where the player is ----

impl Remote {
    /// Here: `session` (connection `conn`, logged in as `name`) takes its
    /// seat at `game` on `owner`.
    pub(super) fn sit(
        &self,
        owner: &str,
        (game, conn): (GameId, u64),
        pass: FarPass,
        session: SessionRef,
    ) -> (SitRequest, tokio::sync::oneshot::Receiver<RawAnswer>) {
        let mut players = lock(&self.players);
        let fresh = match players.get_mut(&conn) {
            Some(view) if view.owner == owner => {
                view.game = game;
                false
            }
            known => {
                // A seat on another node before (a game over there): that
                // connection goes there.
                if let Some(old) = known {
                    self.bus.send(&old.owner, Body::Away { conn });
                }
                let view = PlayerView {
                    session,
                    name: Name::from(pass.name.as_str()),
                    pass: pass.clone(),
                    owner: owner.to_string(),
                    game,
                    expected: 1,
                    stamp: None,
                    in_flight: None,
                };
                players.insert(conn, view);
                true
            }
        };
        drop(players);
        let (request, answer) = self.pending_request();
        self.bus.send(
            owner,
            Body::Sit {
                request,
                conn,
                game,
                pass,
                resend: None,
            },
        );
        (SitRequest { request, fresh }, answer)
    }

    /// Here: the seat asked for by `sit` came to nothing (refused, or no
    /// answer in time). A view it made goes, and its owner (who may have
    /// seated the player after all, or been told to by a takeover
    /// meanwhile) forgets the connection: nothing stays held there.
    pub(super) fn sit_failed(&self, conn: u64, asked: &SitRequest) {
        lock(&self.pending).remove(&asked.request);
        if !asked.fresh {
            return;
        }
        if let Some(view) = lock(&self.players).remove(&conn) {
            self.bus.send(&view.owner, Body::Away { conn });
        }
    }

    /// Here: a command of the player on `conn`, for its seat elsewhere; the
    /// request's number and the answer to come, or `None` if it sits
    /// nowhere else.
    pub(super) fn act(&self, conn: u64, act: FarAct) -> Option<Asked> {
        let (owner, game, request, answer, at) = {
            let mut players = lock(&self.players);
            let view = players.get_mut(&conn)?;
            let (request, answer) = self.pending_request();
            let at = view.plies_heard();
            view.in_flight = resendable(&act, at).then(|| Resend {
                request,
                act: act.clone(),
                at,
            });
            (view.owner.clone(), view.game, request, answer, at)
        };
        let body = Body::Act {
            request,
            conn,
            game,
            act: act.clone(),
            again: false,
            at: None,
        };
        self.bus.send(&owner, body);
        Some(Asked {
            request,
            answer,
            again: Some((conn, act, at)),
        })
    }

    /// Here: request `request` of the player on `conn` (`act`, sent when
    /// it had heard of `at` plies), asked again of its game's owner now;
    /// `None` if it sits at no game elsewhere any more (its connection
    /// closed, or the game came here).
    pub(super) fn ask_again(
        &self,
        request: u64,
        (conn, act, at): &(u64, FarAct, Option<u32>),
    ) -> Option<(String, Body)> {
        let players = lock(&self.players);
        let view = players.get(conn)?;
        let body = Body::Act {
            request,
            conn: *conn,
            game: view.game,
            act: act.clone(),
            again: true,
            at: *at,
        };
        Some((view.owner.clone(), body))
    }

    /// Here: the node that owns `game`, where the player on `conn` sits
    /// (or asked to), if it still does.
    pub(super) fn owner_of_seat(&self, conn: u64, game: GameId) -> Option<String> {
        (lock(&self.players).get(&conn))
            .filter(|view| view.game == game)
            .map(|view| view.owner.clone())
    }

    /// Here: the game the player on `conn` sits at on another node.
    pub(super) fn seat_away(&self, conn: u64) -> Option<GameId> {
        lock(&self.players).get(&conn).map(|view| view.game)
    }

    /// Here: `BOARD` of `game` on `owner`, for a spectator here.
    pub(super) fn board(
        &self,
        owner: &str,
        game: GameId,
    ) -> (u64, tokio::sync::oneshot::Receiver<RawAnswer>) {
        let (request, answer) = self.pending_request();
        let body = Body::Act {
            request,
            conn: 0,
            game,
            act: FarAct::Board,
            again: false,
            at: None,
        };
        self.bus.send(owner, body);
        (request, answer)
    }

    /// Here: the player on `conn` sits at `game` now (a rematch), on the
    /// same owner; the lobby here holds its name for it.
    pub(super) fn moved_on(&self, conn: u64, game: GameId) -> Option<String> {
        let mut players = lock(&self.players);
        let view = players.get_mut(&conn)?;
        view.game = game;
        let sit = SitAway {
            name: Name::clone(&view.name),
            game,
        };
        let owner = view.owner.clone();
        drop(players);
        let lobby = self.doors.sit_away.clone();
        tokio::spawn(async move {
            if let Ok(Err(e)) = lobby.send(sit).await {
                tracing::warn!(game, error = %e, "a rematch elsewhere seats a player who sits in a game here");
            }
        });
        Some(owner)
    }

    /// Here: news from `from` for the player on `conn`.
    pub(super) fn player_news(self: &Arc<Self>, from: &str, conn: u64, seq: u64, news: PlayerNews) {
        let mut players = lock(&self.players);
        let Some(view) = players.get_mut(&conn).filter(|v| v.owner == from) else {
            return;
        };
        if seq != view.expected {
            tracing::warn!(
                game = view.game,
                from,
                missed = seq.saturating_sub(view.expected),
                "lines for a player of a game on another node were lost: taking the seat again"
            );
            self.bus.send(from, view.sit_again(conn, None));
        }
        view.expected = seq + 1;
        match news {
            PlayerNews::Lines(text, stamp) => {
                if stamp.is_some() {
                    view.stamp = stamp;
                }
                if ends(&text, view.game) {
                    self.doors.back.do_send(BackFromAway {
                        name: Name::clone(&view.name),
                        game: view.game,
                    });
                }
                view.session.tell(ToSession::Deliver(Arc::from(text)));
            }
            PlayerNews::Seated(game) => {
                let session = view.session.clone();
                drop(players);
                if let Some(owner) = self.moved_on(conn, game) {
                    let route = self.route_to(owner, game, Some(conn));
                    session.tell(ToSession::Seated(route));
                }
            }
        }
    }

    /// Here: `owner` took over `games`: players here seated at one of them
    /// take their seats there (the snapshot follows).
    pub(super) fn players_follow(&self, owner: &str, games: &[GameId]) {
        let mut players = lock(&self.players);
        let home: Vec<u64> = (players.iter())
            .filter(|(_, view)| games.contains(&view.game) && owner == self.bus.node())
            .map(|(&conn, _)| conn)
            .collect();
        for conn in home {
            if let Some(view) = players.remove(&conn) {
                tokio::spawn(self.sit_here(view));
            }
        }
        for (&conn, view) in players.iter_mut() {
            if !games.contains(&view.game) || view.owner == owner {
                continue;
            }
            view.owner = owner.to_string();
            view.expected = 1;
            let resend = self.unanswered(view);
            self.bus.send(owner, view.sit_again(conn, resend));
        }
    }

    /// The command of `view`'s player still waiting for an answer that a
    /// new owner may give, if any.
    fn unanswered(&self, view: &mut PlayerView) -> Option<Resend> {
        let resend = view.in_flight.take()?;
        lock(&self.pending)
            .contains_key(&resend.request)
            .then_some(resend)
    }

    /// Here: this node took over the game where the player of `view` sat
    /// from here: it takes its seat here (`JOIN` of its own seat, whose
    /// snapshot follows), its route now the game's own.
    fn sit_here(&self, mut view: PlayerView) -> impl Future<Output = ()> + use<> {
        let resend = self.unanswered(&mut view);
        let pending = resend
            .as_ref()
            .and_then(|r| lock(&self.pending).remove(&r.request));
        let counts = Arc::clone(&self.counts);
        let back = BackFromAway {
            name: Name::clone(&view.name),
            game: view.game,
        };
        self.doors.back.do_send(back);
        let found = self.find.send(Find(view.game, std::marker::PhantomData));
        let join_door = self.doors.join.clone();
        async move {
            // The session has its route here before the snapshot the seat
            // brings: a command it then sends finds the game here.
            if let Ok(Some(route)) = found.await {
                view.session.tell(ToSession::Seated(route));
            }
            let join = Join {
                name: Name::clone(&view.name),
                game: view.game,
                route: std::marker::PhantomData,
            };
            match join_door.send(join).await {
                Ok(Ok((seat, _))) => {
                    view.session.tell(ToSession::Seated(Arc::clone(&seat)));
                    if let (Some(resend), Some(waiting)) = (resend, pending) {
                        counts.remote_resent();
                        let replayed = replay_at(&seat, &view.name, resend).await;
                        let _ = waiting.send(raw(replayed));
                    }
                }
                Ok(Err(e)) => tracing::warn!(
                    game = view.game,
                    name = %view.name,
                    error = %e,
                    "a player of a game taken over here could not take its seat"
                ),
                Err(_) => {}
            }
        }
    }

    /// Here: connection `conn` closed; a seat it held elsewhere is kept
    /// there for the grace period.
    pub(super) fn gone_here(&self, conn: u64) {
        if let Some(view) = lock(&self.players).remove(&conn) {
            self.bus.send(&view.owner, Body::Away { conn });
        }
    }
}
