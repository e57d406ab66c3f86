//! A cluster node's lease keeper: a thread with a connection of its own, so
//! that renewals never wait behind the writer's commits. Each second it
//! renews the lease, judges where the lease stands (see
//! [`crate::rules::lease`]) and tells the writer; while the lease is held
//! it declares dead the nodes whose lease passed and claims their games,
//! a share at a time, through the writer (which then holds and writes
//! them), handing each share to be started here.
//!
//! Time here is the monotonic clock, pauses included: a node that was
//! stopped (SIGSTOP, a VM paused) must count the pause against its lease.
//!
//! Every decision about others (declaring nodes dead, claiming games and
//! tournaments, taking the lobby's lead) is made only while this node's
//! lease holds, judged at that moment (not at the last renewal), and the
//! statement itself requires it by the database's clock (`nodes`), so a
//! statement delayed past the lease decides nothing. A renewal that fails
//! is tried again at once on a new connection, each within a short
//! deadline, so that a cut shorter than the lease costs nothing; and a
//! node whose writer has been stuck for a lease stops renewing (see
//! [`Lease::may_renew`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::db::Db;
use super::nodes::{self, Member};
use crate::config::StoreConfig;
use crate::rules::clock::Moment;
use crate::rules::lease::{BusStanding, Lease, Standing};
use crate::store::{GameRecord, Store, StoredTourney};

/// What the keeper tells the daemon.
pub enum News {
    /// Games taken over, in play: to start here.
    Claimed(Vec<GameRecord>),
    /// Tournaments taken over, not over: to run here from their facts.
    Tourneys(Vec<StoredTourney>),
    /// The database declared this node dead: it must stop.
    Lost,
    /// This node declared these nodes dead.
    Declared(Vec<String>),
    /// Another node leads the lobby now (or this one does): every node
    /// tells it its seeks.
    Leader,
}

/// How often the lease is renewed: each second, or three times a lease if
/// that is shorter.
fn renew_every(lease: Duration) -> Duration {
    (lease / 3).min(Duration::from_secs(1))
}

/// The most claims one round makes: a dead node's games come over in a few
/// rounds rather than holding the writer for long.
const CLAIMS_PER_ROUND: usize = 16;

/// The pause before a failed renewal is tried again.
const RENEW_RETRY: Duration = Duration::from_millis(100);

/// How long one renewal (or connecting for it) may take: half the lease,
/// so that a slow but live server is waited for. A connection gone silent
/// fails sooner, by its TCP user timeout (see `connect::Deadlines`), and
/// is then made again at once.
fn renew_deadline(lease: Duration) -> Duration {
    lease / 2
}

/// The lease as this node reckons it, shared by the renewals (which change
/// it) and the takeovers (which look at it before each decision). The lock
/// is held only to read or change it, never across a statement.
struct Reckoning {
    lease: std::sync::Mutex<Lease>,
    /// When the registration was sent: moments count from it.
    taken: Instant,
    /// Whether another live node heard the bus, by the last renewal.
    others_hear: AtomicBool,
}

impl Reckoning {
    fn new(length: Duration, taken: Instant) -> Reckoning {
        Reckoning {
            lease: std::sync::Mutex::new(Lease::taken(length, Moment::from_micros(0))),
            taken,
            others_hear: AtomicBool::new(false),
        }
    }

    /// What the last renewal said of the other nodes' links to the bus.
    fn others_hear(&self, hear: bool) {
        self.others_hear.store(hear, Ordering::Release);
    }

    /// How this node stands on the bus, its own link being `link` (whether
    /// up, and for how long so; `None`: no bus).
    fn bus(&self, link: Option<(bool, Duration)>) -> BusStanding {
        BusStanding {
            down_for: match link {
                Some((false, down_for)) => down_for,
                _ => Duration::ZERO,
            },
            others_hear: self.others_hear.load(Ordering::Acquire),
        }
    }

    fn moment(&self, at: Instant) -> Moment {
        let micros = at.saturating_duration_since(self.taken).as_micros();
        Moment::from_micros(u64::try_from(micros).unwrap_or(u64::MAX))
    }

    /// A copy of the lease, to judge by.
    fn lease(&self) -> Lease {
        self.lease
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn change(&self, change: impl FnOnce(&mut Lease)) {
        change(
            &mut self
                .lease
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }

    /// Where the lease stands now.
    fn standing(&self) -> Standing {
        self.lease().standing(self.moment(Instant::now()))
    }

    /// Whether this node may judge others now.
    fn may_judge(&self) -> bool {
        self.lease().may_judge_others(self.moment(Instant::now()))
    }
}

/// The running keeper.
pub struct Keeper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Keeper {
    /// Starts keeping `member`'s lease of length `lease` (taken at `taken`,
    /// when its registration was sent), claiming through `store`, telling
    /// `news` what happens.
    pub fn start(
        config: StoreConfig,
        member: Member,
        lease: Duration,
        taken: Instant,
        store: Store,
        news: Box<dyn Fn(News) + Send>,
    ) -> std::io::Result<Keeper> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("cluster-lease".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match runtime {
                    Ok(runtime) => runtime.block_on(keep(
                        &config, &member, lease, taken, &store, &*news, &stopping,
                    )),
                    Err(e) => tracing::error!(error = %e, "the lease keeper cannot start"),
                }
            })?;
        Ok(Keeper {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops keeping the lease and leaves the cluster (the others take this
    /// node's games at once): once the store has committed what it holds.
    pub fn leave(mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The keeper's two loops, side by side on its runtime: the renewals, until
/// told to stop (then it leaves) or the lease is lost, and the takeovers,
/// on a connection of their own, so that a claim waiting for the writer
/// never holds a renewal back.
async fn keep(
    config: &StoreConfig,
    member: &Member,
    length: Duration,
    taken: Instant,
    store: &Store,
    news: &(dyn Fn(News) + Send),
    stop: &AtomicBool,
) {
    let reckoning = Reckoning::new(length, taken);
    let renewing = AtomicBool::new(true);
    let renewals = async {
        renew_loop(config, member, &reckoning, news, stop).await;
        renewing.store(false, Ordering::Release);
    };
    let takeovers = take_over_loop(config, member, store, news, (&reckoning, &renewing));
    tokio::join!(renewals, takeovers);
}

/// Renews the lease each interval (at once again after a failure) and says
/// where it stands (to the writer through the node's state); leaves the
/// cluster when told to stop.
async fn renew_loop(
    config: &StoreConfig,
    member: &Member,
    reckoning: &Reckoning,
    news: &(dyn Fn(News) + Send),
    stop: &AtomicBool,
) {
    let length = reckoning.lease().length();
    let mut db: Option<Db> = None;
    let mut ticks = tokio::time::interval(renew_every(length));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut held_back = false;
    while !stop.load(Ordering::Acquire) {
        ticks.tick().await;
        if !renew_once(config, &mut db, member, reckoning, &mut held_back).await {
            ticks.reset_after(RENEW_RETRY);
        }
        let standing = reckoning.standing();
        let was = member.state.standing();
        member.state.set(standing);
        say_standing(member, was, standing);
        if standing == Standing::Lost {
            news(News::Lost);
            return;
        }
    }
    leave(config, db, member, length).await;
}

/// One renewal, unless the writer has been stuck for a lease (then none,
/// said once while it lasts); false if it failed and is to be tried again
/// soon.
async fn renew_once(
    config: &StoreConfig,
    db: &mut Option<Db>,
    member: &Member,
    reckoning: &Reckoning,
    held_back: &mut bool,
) -> bool {
    let sent = Instant::now();
    let stuck = member.state.writer_stuck_for(sent);
    let link = member.state.bus_state(sent);
    let bus = reckoning.bus(link);
    let lease = reckoning.lease();
    if !lease.may_renew(stuck, bus) {
        if !*held_back {
            say_held_back(member, stuck, lease.cut_off_from_bus(bus));
        }
        *held_back = true;
        return true;
    }
    *held_back = false;
    match renew(
        config,
        db,
        (member.incarnation.number, lease.length()),
        link,
    )
    .await
    {
        Ok(Some(others_hear)) => {
            reckoning.change(|lease| lease.renewed(reckoning.moment(sent)));
            reckoning.others_hear(others_hear);
            member.state.renewal(true);
        }
        Ok(None) => reckoning.change(Lease::refused),
        Err(why) => {
            member.state.renewal(false);
            tracing::warn!(why, "the node's lease could not be renewed: trying again");
            return false;
        }
    }
    true
}

/// Says why the lease is not renewed: the writer stuck, or the node cut off
/// from the bus that the others hear.
fn say_held_back(member: &Member, stuck: Duration, cut_off: bool) {
    let node = &member.incarnation.node;
    match cut_off {
        true => tracing::error!(
            node,
            "this node has been cut off from the cluster's NATS server for a lease while the \
             other nodes reach it: the lease is not renewed, so that they take its games over"
        ),
        false => tracing::error!(
            node,
            stuck_ms = stuck.as_millis(),
            "this node's store writer has made no progress for a lease: the lease is not \
             renewed, so that the other nodes take its games over"
        ),
    }
}

/// Leaves the cluster (declared dead at once, so that the others take this
/// node's games without waiting for its lease), on a new connection if the
/// renewals' was given up.
async fn leave(config: &StoreConfig, mut db: Option<Db>, member: &Member, length: Duration) {
    let number = member.incarnation.number;
    if db.as_ref().is_none_or(Db::is_closed) {
        let connected = tokio::time::timeout(length, super::connect::connect(config)).await;
        db = connected.ok().and_then(Result::ok).map(Db::new);
    }
    let left = match db.as_mut() {
        Some(db) => tokio::time::timeout(length, nodes::leave(db, number))
            .await
            .unwrap_or_else(|_| Err("PostgreSQL did not answer in time".into())),
        None => Err("PostgreSQL cannot be reached".into()),
    };
    match left {
        Ok(()) => tracing::info!(
            node = member.incarnation.node,
            incarnation = number,
            "left the cluster: the other nodes take this node's games"
        ),
        Err(why) => tracing::warn!(why, "could not leave the cluster: its lease will pass"),
    }
}

/// While the renewals go on: each interval, with the lease held, declares
/// dead the nodes whose lease passed (if this node may judge others),
/// claims games without a live owner, and reads which other nodes are live.
async fn take_over_loop(
    config: &StoreConfig,
    member: &Member,
    store: &Store,
    news: &(dyn Fn(News) + Send),
    (reckoning, renewing): (&Reckoning, &AtomicBool),
) {
    let length = reckoning.lease().length();
    let mut db: Option<Db> = None;
    // A claim of tournaments whose commit went unanswered.
    let mut in_doubt = false;
    let mut ticks = tokio::time::interval(renew_every(length));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while renewing.load(Ordering::Acquire) {
        ticks.tick().await;
        if reckoning.standing() != Standing::Held {
            continue;
        }
        if db.as_ref().is_none_or(Db::is_closed) {
            match tokio::time::timeout(length / 2, super::connect::connect(config)).await {
                Ok(Ok(client)) => db = Some(Db::new(client)),
                _ => continue,
            }
        }
        let Some(conn) = db.as_mut() else {
            continue;
        };
        // Each round within a deadline: a connection gone silent is
        // dropped and made again, never waited on past the lease.
        let round = async {
            take_over(conn, member, store, news, reckoning).await;
            in_doubt = take_tourneys(conn, member, news, in_doubt).await;
            // Whom `LIST` and `WHO` ask.
            if let Ok(peers) = nodes::peers(conn, member.incarnation.number).await {
                member.state.set_peers(peers);
            }
            if reckoning.standing() == Standing::Held {
                let hears = member.state.bus_state(Instant::now());
                let hears = hears.is_none_or(|(up, _)| up);
                let standing = (reckoning.may_judge(), hears);
                follow_leader(conn, member, news, (standing, length)).await;
            }
        };
        if tokio::time::timeout(length, round).await.is_err() {
            tracing::warn!("a takeover round took longer than the lease: connecting again");
            db = None;
        }
    }
}

/// Takes over the tournaments of dead nodes, a share a round, after their
/// games: each goes on here from its stored facts. After a claim `in_doubt`
/// (its commit unanswered), every tournament this node owns is read first
/// (the lobby skips those it holds). Whether a claim is in doubt now.
async fn take_tourneys(
    db: &mut Db,
    member: &Member,
    news: &(dyn Fn(News) + Send),
    in_doubt: bool,
) -> bool {
    let me = member.incarnation.number;
    if in_doubt {
        match super::tourneys::owned(db, me).await {
            Ok(tourneys) => news(News::Tourneys(tourneys)),
            Err(error) => {
                tracing::warn!(%error, "could not read this node's tournaments again");
                return true;
            }
        }
    }
    match super::tourneys::claim(db, me).await {
        Ok(tourneys) if tourneys.is_empty() => false,
        Ok(tourneys) => {
            member.state.claimed_tourneys(tourneys.len());
            let ids: Vec<u64> = tourneys.iter().map(|t| t.id).collect();
            tracing::info!(
                node = member.incarnation.node,
                tourneys = ?ids,
                "took over {} tournaments of a node declared dead",
                ids.len()
            );
            news(News::Tourneys(tourneys));
            false
        }
        Err(error) => {
            tracing::warn!(%error, "could not take tournaments over");
            true
        }
    }
}

/// Takes the lobby's lead if it is free (or, as `nodes::lead` says, if its
/// holder's lease passed or it is cut off from the bus), reads who leads,
/// and says so when that changed.
async fn follow_leader(
    db: &mut Db,
    member: &Member,
    news: &(dyn Fn(News) + Send),
    (standing, lease): ((bool, bool), Duration),
) {
    let leader = match nodes::lead(db, member.incarnation.number, standing, lease).await {
        Ok(leader) => leader.map(|l| (l.node, l.epoch)),
        Err(why) => {
            tracing::warn!(why, "could not read the lobby's leader");
            return;
        }
    };
    if !member.state.set_leader(leader.clone()) {
        return;
    }
    if let Some((leader, epoch)) = &leader {
        tracing::info!(
            node = member.incarnation.node,
            leader,
            epoch,
            "the lobby's leader is node {leader} (epoch {epoch}): seeks are paired there"
        );
    }
    news(News::Leader);
}

fn say_standing(member: &Member, was: Standing, now: Standing) {
    let node = &member.incarnation.node;
    match (was, now) {
        (Standing::Held, Standing::Lapsed) => tracing::error!(
            node,
            "this node's lease lapsed (PostgreSQL did not renew it in time): it acknowledges \
             nothing until a renewal succeeds"
        ),
        (Standing::Lapsed, Standing::Held) => {
            tracing::warn!(node, "this node's lease is renewed again: it writes again");
        }
        (_, Standing::Lost) if was != Standing::Lost => tracing::error!(
            node,
            incarnation = member.incarnation.number,
            "this node was declared dead by the cluster and its games taken over: it stops"
        ),
        _ => {}
    }
}

/// Renews the lease on the keeper's connection, made again if need be.
async fn renew(
    config: &StoreConfig,
    db: &mut Option<Db>,
    (incarnation, lease): (i64, Duration),
    bus: Option<(bool, Duration)>,
) -> Result<Option<bool>, String> {
    let deadline = renew_deadline(lease);
    if db.as_ref().is_none_or(Db::is_closed) {
        *db = None;
        let connected = tokio::time::timeout(deadline, super::connect::connect(config)).await;
        let client = connected
            .map_err(|_| format!("connecting took longer than {} ms", deadline.as_millis()))??;
        *db = Some(Db::new(client));
    }
    let Some(conn) = db.as_mut() else {
        return Err("no connection".into());
    };
    match tokio::time::timeout(deadline, nodes::renew(conn, incarnation, lease, bus)).await {
        Ok(Ok(renewed)) => Ok(renewed),
        Ok(Err(why)) => {
            *db = None;
            Err(why)
        }
        Err(_) => {
            // A renewal stuck (a connection gone silent): drop the
            // connection and try again at once on a new one.
            *db = None;
            Err(format!(
                "the renewal took longer than {} ms",
                deadline.as_millis()
            ))
        }
    }
}

/// Declares dead the nodes whose lease passed (if this node may judge
/// them now: see [`Lease::may_judge_others`]), then claims games without a
/// live owner, a share at a time, while there are any and the lease holds.
async fn take_over(
    db: &mut Db,
    member: &Member,
    store: &Store,
    news: &(dyn Fn(News) + Send),
    reckoning: &Reckoning,
) {
    let declared = match reckoning.may_judge() {
        true => nodes::declare_expired(db, member.incarnation.number).await,
        false => Ok(Vec::new()),
    };
    match declared {
        Ok(dead) => {
            member.state.declared_dead(dead.len());
            if !dead.is_empty() {
                news(News::Declared(
                    dead.iter().map(|n| n.node.clone()).collect(),
                ));
            }
            for node in dead {
                tracing::warn!(
                    node = node.node,
                    incarnation = node.number,
                    "node {} (incarnation {}) did not renew its lease: declared dead, its \
                     games are taken over",
                    node.node,
                    node.number
                );
            }
        }
        Err(why) => tracing::warn!(why, "could not look for dead nodes"),
    }
    for _ in 0..CLAIMS_PER_ROUND {
        // Looked at again before each claim: a lease that lapsed meanwhile
        // takes nothing more.
        if reckoning.standing() != Standing::Held {
            return;
        }
        match nodes::orphans(db).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(why) => {
                tracing::warn!(why, "could not look for games to take over");
                return;
            }
        }
        match store.claim().await {
            // Only open games (cancelled), or games another node is
            // claiming at this moment: look again.
            Ok(games) if games.is_empty() => {}
            Ok(games) => {
                member.state.claimed(games.len());
                let ids: Vec<u64> = games.iter().map(|g| g.id).collect();
                tracing::info!(
                    node = member.incarnation.node,
                    games = ?ids,
                    "took over {} games in play",
                    ids.len()
                );
                news(News::Claimed(games));
            }
            Err(error) => {
                tracing::warn!(%error, "could not take games over");
                return;
            }
        }
    }
}
