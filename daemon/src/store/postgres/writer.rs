//! The PostgreSQL writer thread: it owns the only writing connection and
//! commits in batches, as the SQLite writer does (group commit: the moves
//! queued while a commit is under way share the next one, in one
//! multi-row statement), and answers each write only once its batch is
//! committed.
//!
//! A server that goes away fails the batch under way (`ERR 503` for the
//! moves in it) and the writes after it, without waiting, until a new
//! connection succeeds: each batch tries again once the last attempt is
//! `retry::RETRY_AFTER` old, so writes go on by themselves when the server is
//! back. A connection lost once a batch's commit was sent leaves the batch
//! in doubt: its writes stay unanswered until the writer, connecting again
//! (at once, then less and less often, up to [`IN_DOUBT_PAUSE_MAX`]),
//! reads its own `writer_commits` row, which the batch set, and learns
//! whether it committed; it asks only once the server process of the lost
//! connection is gone (`writer_session`), so that the answer cannot change
//! after it is read. Meanwhile nothing else is written (later writes,
//! claims and names online are refused), and the held moves stay as the
//! batch left them (its transaction over them stays open: see `held`), so
//! a write is never answered as done when it is not, nor done twice. A
//! daemon stopping meanwhile leaves the batch unanswered, as a crash would.
//!
//! A batch that takes longer than its deadline (see
//! `connect::Deadlines`) is given up as a connection lost: in doubt if its
//! commit was sent, else not written. So a connection that goes silent
//! holds the writer for at most that long.
//!
//! Only one daemon writes a database: the writing connection holds an
//! advisory lock, taken again at each reconnection.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use super::connect::Deadlines;
use super::db::{Backend, Db};
use super::held::{HeldMoves, Txn};
use super::nodes::Member;
use super::retry::Retry;
use super::writer_session::{connect_writer, read_mark};
use super::writes::{self, Mark, WriteError};
use crate::config::StoreConfig;
use crate::faults::Faults;
use crate::store::requests::{BatchWriter, WriteJob, answer};
use crate::store::{StoreError, StoreStats, StoredMove, Write};

/// The first and the longest pause between attempts while a batch is in
/// doubt.
const IN_DOUBT_PAUSE: Duration = Duration::from_millis(50);
const IN_DOUBT_PAUSE_MAX: Duration = Duration::from_millis(500);

/// A batch in doubt: its writes, the counts they answer with if it
/// committed, its transaction over the held moves, the server process that
/// ran it, and when to ask the server next.
pub(super) struct Doubt {
    jobs: Vec<WriteJob>,
    counts: Vec<usize>,
    error: String,
    txn: Txn,
    lost: Option<Backend>,
    pause: Duration,
    next_try: Instant,
}

/// The writer: its connection (when it has one), the moves it holds and
/// the numbers that mark its batches.
pub struct PgWriter {
    pub(super) config: StoreConfig,
    pub(super) runtime: Runtime,
    pub(super) db: Option<Db>,
    pub(super) held: HeldMoves,
    /// This writer's start, random: its batches' mark with `batch`.
    pub(super) run: i64,
    /// The last batch begun.
    pub(super) batch: i64,
    /// The last failed attempt to connect, and why it failed.
    pub(super) down: Retry,
    pub(super) faults: Option<Faults>,
    /// Set when the daemon stops (see `StoreThreads::close`).
    pub(super) closing: Arc<AtomicBool>,
    /// The batch in doubt, if one is.
    pub(super) doubt: Option<Doubt>,
    /// For a cluster node: its incarnation, which every write of a game is
    /// conditional on, and its lease's standing.
    pub(super) member: Option<Member>,
    /// A claim failed: it may have committed unanswered.
    pub(super) claim_unsure: bool,
    /// The server process of the last connection given up, to be ended
    /// before the next one writes.
    pub(super) previous: Option<Backend>,
}

/// How a batch ended.
enum Outcome {
    Committed(Vec<usize>),
    /// A statement failed (the batch rolled back): retry each write alone.
    Failed(String),
    /// No connection, or it was lost before `COMMIT`: nothing was written.
    Unreachable(String),
    /// The connection was lost once the commit was sent: the counts the
    /// writes answer with if it committed, the batch's transaction over the
    /// held moves and the server process that ran it.
    InDoubt(String, Vec<usize>, Txn, Option<Backend>),
}

impl BatchWriter for PgWriter {
    fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        PgWriter::commit_batch(self, batch, stats);
    }

    fn held_moves(
        &self,
        game: flipline::protocol::GameId,
    ) -> Result<Option<Vec<StoredMove>>, String> {
        match &self.doubt {
            Some(doubt) => Err(waiting(doubt)),
            None => Ok(self.held.moves(game)),
        }
    }

    fn waiting(&self) -> Option<Duration> {
        match &self.doubt {
            Some(doubt) => Some(doubt.next_try.saturating_duration_since(Instant::now())),
            // A node whose last batch found the server unreachable looks
            // again by itself, so that it is not counted stuck for want of
            // a move to write.
            None if self.stuck() => Some(super::retry::RETRY_AFTER),
            None => None,
        }
    }

    fn tend(&mut self, stats: &StoreStats) {
        self.settle(stats);
        if self.doubt.is_none() && self.stuck() && self.connected().is_ok() {
            self.progressed();
        }
    }

    fn claim(&mut self) -> Result<Vec<crate::store::GameRecord>, String> {
        PgWriter::claim(self)
    }

    fn claim_name(&mut self, name: &str) -> Result<crate::store::NameClaim, String> {
        PgWriter::claim_name(self, name)
    }

    fn release_name(&mut self, name: &str) -> Result<(), String> {
        PgWriter::release_name(self, name)
    }
}

/// Why a write is refused while a batch is in doubt.
fn waiting(doubt: &Doubt) -> String {
    format!(
        "a commit in doubt waits for PostgreSQL to say whether it was made ({})",
        doubt.error
    )
}

/// The mark of a writer's batch, and whose games it writes: a single
/// daemon's writer is `flipd`, a node's is the node's name.
fn mark_of(member: Option<&Member>, run: i64, batch: i64) -> Mark<'_> {
    Mark {
        writer: member.map_or("flipd", |m| m.incarnation.node.as_str()),
        run,
        batch,
        owner: member.map(|m| m.incarnation.number),
    }
}

impl PgWriter {
    /// A cluster node's writer has work it has not finished (its lease
    /// keeper stops renewing if that lasts a lease).
    fn busy(&self) {
        if let Some(member) = &self.member {
            member.state.writer_busy();
        }
    }

    /// The writer finished what it had, for good.
    fn progressed(&self) {
        if let Some(member) = &self.member {
            member.state.writer_progressed();
        }
    }

    /// Whether a cluster node's writer has work it has not finished.
    fn stuck(&self) -> bool {
        self.member
            .as_ref()
            .is_some_and(|m| !m.state.writer_stuck_for(Instant::now()).is_zero())
    }

    /// Why no claim or name online is written now: a commit in doubt, or a
    /// lease not held.
    pub(super) fn may_write(&self) -> Result<(), String> {
        if let Some(doubt) = &self.doubt {
            return Err(waiting(doubt));
        }
        self.lease_not_held().map_or(Ok(()), Err)
    }

    /// Why nothing is written, if this cluster node's lease is not held: a
    /// node that could not renew its lease acknowledges nothing (its games
    /// may be another's by now).
    pub(super) fn lease_not_held(&self) -> Option<String> {
        use crate::rules::lease::Standing;
        match self.member.as_ref()?.state.standing() {
            Standing::Held => None,
            Standing::Lapsed => Some(
                "this node could not renew its lease in time: it writes nothing until it does"
                    .into(),
            ),
            Standing::Lost => Some(
                "this node was declared dead by the cluster: its games are played on other nodes"
                    .into(),
            ),
        }
    }

    /// Commits `batch` in one transaction; if a statement fails, each write
    /// alone, so that one bad write fails alone. Leaves `batch` empty.
    fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        self.settle(stats);
        if let Some(why) = self.lease_not_held() {
            batch
                .drain(..)
                .for_each(|job| answer(job, Err(StoreError::Failed(why.clone()))));
            return;
        }
        if let Some(doubt) = &self.doubt {
            let why = waiting(doubt);
            stats.set_refusing(true);
            batch
                .drain(..)
                .for_each(|job| answer(job, Err(StoreError::Failed(why.clone()))));
            return;
        }
        let writes: Vec<&Write> = batch.iter().map(|job| &job.write).collect();
        self.busy();
        let outcome = self.run_batch(&writes, stats);
        if matches!(outcome, Outcome::Committed(_) | Outcome::Failed(_)) {
            self.progressed();
        }
        match outcome {
            Outcome::Committed(counts) => {
                stats.set_refusing(false);
                stats.committed(batch.len());
                for (job, count) in batch.drain(..).zip(counts) {
                    answer(job, Ok(count));
                }
            }
            Outcome::Failed(why) if batch.len() == 1 => {
                stats.set_refusing(false);
                batch
                    .drain(..)
                    .for_each(|job| answer(job, Err(StoreError::Failed(why.clone()))));
            }
            Outcome::Failed(_) => self.commit_each(batch, stats),
            Outcome::Unreachable(why) => {
                stats.set_refusing(true);
                batch
                    .drain(..)
                    .for_each(|job| answer(job, Err(StoreError::Failed(why.clone()))));
            }
            Outcome::InDoubt(error, counts, txn, lost) => {
                self.begin_doubt(std::mem::take(batch), (counts, txn, lost), error);
            }
        }
    }

    /// Each write of a batch that failed, in a transaction of its own.
    fn commit_each(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        for job in batch.drain(..) {
            if let Some(doubt) = &self.doubt {
                answer(job, Err(StoreError::Failed(waiting(doubt))));
                continue;
            }
            match self.run_batch(&[&job.write], stats) {
                Outcome::Committed(counts) => {
                    stats.committed(1);
                    answer(job, Ok(counts.into_iter().sum()));
                }
                Outcome::Failed(why) | Outcome::Unreachable(why) => {
                    answer(job, Err(StoreError::Failed(why)));
                }
                Outcome::InDoubt(error, counts, txn, lost) => {
                    self.begin_doubt(vec![job], (counts, txn, lost), error);
                }
            }
        }
    }

    fn begin_doubt(
        &mut self,
        jobs: Vec<WriteJob>,
        (counts, txn, lost): (Vec<usize>, Txn, Option<Backend>),
        error: String,
    ) {
        tracing::warn!(
            error,
            writes = jobs.len(),
            "the connection to PostgreSQL was lost during a commit: its writes are \
             answered once the server says whether it committed"
        );
        self.doubt = Some(Doubt {
            jobs,
            counts,
            error,
            txn,
            lost,
            pause: IN_DOUBT_PAUSE,
            next_try: Instant::now(),
        });
    }

    /// Asks the server, if it is time (or the daemon stops), whether the
    /// batch in doubt committed, and answers its writes once it knows. A
    /// daemon stopping with the server unreachable leaves them unanswered.
    fn settle(&mut self, stats: &StoreStats) {
        let closing = self.closing.load(Ordering::Relaxed);
        let Some(doubt) = &mut self.doubt else {
            return;
        };
        if !closing && Instant::now() < doubt.next_try {
            return;
        }
        let mark = mark_of(self.member.as_ref(), self.run, self.batch);
        let deadline = Deadlines::of_config(&self.config).request;
        let read = self.runtime.block_on(async {
            let read = read_mark(
                &self.config,
                self.member.is_some(),
                doubt.lost.as_ref(),
                mark.writer,
                (self.run, self.batch),
            );
            tokio::time::timeout(deadline * 2, read)
                .await
                .unwrap_or_else(|_| Err("PostgreSQL did not answer in time".into()))
        });
        match read {
            Ok((db, committed)) => {
                // The lost connection's process is gone: none to end next.
                self.previous = None;
                self.db = Some(db);
                self.answer_doubt(committed, stats);
            }
            Err(why) if closing => {
                let Some(doubt) = self.doubt.take() else {
                    return;
                };
                let left = doubt.jobs.len();
                self.held.rollback(doubt.txn);
                tracing::error!(
                    why,
                    writes = left,
                    "flipd stops with a commit in doubt, PostgreSQL being unreachable: \
                     its writes are left unanswered and may or may not be stored"
                );
            }
            Err(why) => {
                tracing::debug!(why, "the commit in doubt waits for PostgreSQL");
                doubt.next_try = Instant::now() + doubt.pause;
                doubt.pause = (doubt.pause * 2).min(IN_DOUBT_PAUSE_MAX);
            }
        }
    }

    /// The server said whether the batch in doubt committed: its writes are
    /// answered so, and the held moves follow.
    fn answer_doubt(&mut self, committed: bool, stats: &StoreStats) {
        let Some(doubt) = self.doubt.take() else {
            return;
        };
        tracing::info!(committed, "the commit in doubt is resolved");
        stats.set_refusing(false);
        self.progressed();
        if committed {
            self.held.commit(doubt.txn);
            stats.committed(doubt.jobs.len());
            for (job, count) in doubt.jobs.into_iter().zip(doubt.counts) {
                answer(job, Ok(count));
            }
        } else {
            self.held.rollback(doubt.txn);
            let why = format!(
                "the connection to PostgreSQL was lost before the commit: {}",
                doubt.error
            );
            for job in doubt.jobs {
                answer(job, Err(StoreError::Failed(why.clone())));
            }
        }
    }

    /// Runs `writes` in one transaction, within the request deadline.
    fn run_batch(&mut self, writes: &[&Write], stats: &StoreStats) -> Outcome {
        if let Some(faults) = &self.faults
            && faults.write_fails()
        {
            return Outcome::Unreachable("the store refuses writes (a fault switched on)".into());
        }
        if let Err(why) = self.connected() {
            return Outcome::Unreachable(why);
        }
        let Some(mut db) = self.db.take() else {
            return Outcome::Unreachable("no connection to PostgreSQL".into());
        };
        let txn = match self.held.begin() {
            Ok(txn) => txn,
            Err(why) => {
                self.db = Some(db);
                return Outcome::Unreachable(why);
            }
        };
        self.batch = self.batch.wrapping_add(1);
        let period = self.config.rating_period_days;
        let mark = mark_of(self.member.as_ref(), self.run, self.batch);
        let deadline = Deadlines::of_config(&self.config).request;
        let mut progress = Progress::default();
        let work = transaction(
            &mut db,
            &mut self.held,
            writes,
            (&mark, period),
            &mut progress,
        );
        let timed = self
            .runtime
            .block_on(async { tokio::time::timeout(deadline, work).await });
        let result = match timed {
            Ok(result) => result,
            Err(_) => Err(progress.timed_out(deadline)),
        };
        self.fenced_out(&result);
        let outcome = match result {
            Ok(counts) => Outcome::Committed(counts),
            Err(Step::Lost(error)) => Outcome::Unreachable(error),
            Err(Step::Refused(error)) => {
                let _ = self.runtime.block_on(db.batch("ROLLBACK"));
                Outcome::Failed(error)
            }
            Err(Step::Fenced(owned)) => {
                let _ = self.runtime.block_on(db.batch("ROLLBACK"));
                Outcome::Failed(format!("{owned} is run by another node now"))
            }
            Err(Step::InDoubt(error, counts)) => {
                // The held moves stay as the batch left them until the
                // server says whether it committed.
                stats.set_refusing(true);
                self.previous = db.backend().cloned();
                return Outcome::InDoubt(error, counts, txn, db.backend().cloned());
            }
            Err(Step::RolledBack(error)) => Outcome::Failed(error),
        };
        match &outcome {
            Outcome::Committed(_) => self.held.commit(txn),
            _ => self.held.rollback(txn),
        }
        // A connection lost is made again by the next batch, once the
        // server has ended this one's process.
        if !db.is_closed() && !matches!(outcome, Outcome::Unreachable(_)) {
            self.db = Some(db);
        } else {
            self.previous = db.backend().cloned();
        }
        outcome
    }

    /// A write of a game another node owns: this node was declared dead.
    fn fenced_out(&self, result: &Result<Vec<usize>, Step>) {
        if let Err(Step::Fenced(owned)) = result
            && let Some(member) = &self.member
        {
            tracing::error!(
                %owned,
                node = member.incarnation.node,
                incarnation = member.incarnation.number,
                "{owned} is owned by another node: this node was declared dead and \
                 acknowledges nothing more"
            );
            member.state.set(crate::rules::lease::Standing::Lost);
        }
    }

    /// A live connection, made again if need be (at most once in
    /// `retry::RETRY_AFTER` while the server is down).
    pub(super) fn connected(&mut self) -> Result<(), String> {
        if self.db.as_ref().is_some_and(|db| !db.is_closed()) {
            return Ok(());
        }
        self.db = None;
        let was_down = self.down.is_down();
        let (runtime, config) = (&self.runtime, &self.config);
        let clustered = self.member.is_some();
        let previous = self.previous.as_ref();
        let deadline = Deadlines::of_config(config).request * 2;
        let connect = || {
            runtime.block_on(async {
                tokio::time::timeout(deadline, connect_writer(config, clustered, previous))
                    .await
                    .unwrap_or_else(|_| Err("PostgreSQL did not answer in time".into()))
            })
        };
        match self.down.attempt(connect) {
            Ok(db) => {
                self.previous = None;
                if was_down {
                    tracing::warn!("PostgreSQL answers again: writes succeed");
                }
                self.db = Some(db);
                Ok(())
            }
            Err(why) => {
                if !was_down {
                    tracing::error!(
                        url = %self.config.url,
                        why,
                        "PostgreSQL cannot be reached: every write fails (moves are answered \
                         ERR 503) until it answers again; they go on by themselves then"
                    );
                }
                Err(why)
            }
        }
    }
}

/// Where a transaction failed.
enum Step {
    /// The connection was lost before `COMMIT` was sent: nothing was
    /// written.
    Lost(String),
    /// A statement was refused: the transaction is to be rolled back.
    Refused(String),
    /// The connection was lost once `COMMIT` was sent: written or not, as
    /// the server decided; the counts the writes would answer with.
    InDoubt(String, Vec<usize>),
    /// The server answered `COMMIT` with an error: nothing was written.
    RolledBack(String),
    /// A write of a game another node owns: nothing was written, the
    /// transaction is to be rolled back.
    Fenced(super::writes::Owned),
}

/// How far a transaction got: whether its commit was sent (a statement of
/// moves alone commits by itself), and the counts its writes answer with.
#[derive(Default)]
struct Progress {
    commit_sent: bool,
    counts: Vec<usize>,
}

impl Progress {
    /// Where a transaction given up after `deadline` stands: in doubt once
    /// its commit was sent, else never to be committed (the connection is
    /// dropped with it).
    fn timed_out(&mut self, deadline: Duration) -> Step {
        let why = format!(
            "PostgreSQL did not answer within {} ms",
            deadline.as_millis()
        );
        match self.commit_sent {
            true => Step::InDoubt(why, std::mem::take(&mut self.counts)),
            false => Step::Lost(why),
        }
    }
}

/// A statement's error before `COMMIT`: refused by the server, or the
/// connection lost (any error that is not the server's answer).
fn before_commit(error: &tokio_postgres::Error) -> Step {
    let why = super::describe(error);
    match error.as_db_error() {
        Some(_) => Step::Refused(why),
        None => Step::Lost(why),
    }
}

/// `BEGIN`, the writes, the batch's mark, `COMMIT`; or, for moves alone,
/// one statement that is its own transaction.
async fn transaction(
    db: &mut Db,
    held: &mut HeldMoves,
    writes: &[&Write],
    (mark, rating_period_days): (&Mark<'_>, u32),
    progress: &mut Progress,
) -> Result<Vec<usize>, Step> {
    if writes::are_moves_alone(writes) {
        // One statement, its own transaction: committed once sent.
        progress.commit_sent = true;
        progress.counts = vec![1; writes.len()];
    }
    if let Some(done) = writes::moves_alone(db, held, writes, mark).await {
        return match done {
            Ok(counts) => Ok(counts),
            Err(WriteError::Refused(why)) => Err(Step::Refused(why)),
            Err(WriteError::Fenced(game)) => Err(Step::Fenced(game)),
            Err(WriteError::Sql(e)) if e.as_db_error().is_some() => {
                Err(Step::RolledBack(super::describe(&e)))
            }
            // Sent or not, committed or not: the mark tells.
            Err(WriteError::Sql(e)) => {
                Err(Step::InDoubt(super::describe(&e), vec![1; writes.len()]))
            }
        };
    }
    let before = |e: tokio_postgres::Error| before_commit(&e);
    db.batch("BEGIN").await.map_err(before)?;
    let counts = writes::run(db, held, writes, rating_period_days, mark.owner)
        .await
        .map_err(|error| match error {
            WriteError::Sql(e) => before(e),
            WriteError::Refused(why) => Step::Refused(why),
            WriteError::Fenced(game) => Step::Fenced(game),
        })?;
    const MARK: &str = "INSERT INTO writer_commits (writer, run, batch) VALUES ($3, $1, $2) \
         ON CONFLICT (writer) DO UPDATE SET run = EXCLUDED.run, batch = EXCLUDED.batch";
    db.execute(MARK, &[&mark.run, &mark.batch, &mark.writer])
        .await
        .map_err(before)?;
    progress.counts.clone_from(&counts);
    progress.commit_sent = true;
    match db.batch("COMMIT").await {
        Ok(()) => Ok(counts),
        Err(e) if e.as_db_error().is_some() => Err(Step::RolledBack(super::describe(&e))),
        Err(e) => Err(Step::InDoubt(super::describe(&e), counts)),
    }
}

impl PgWriter {
    /// Claims a share of the games without a live owner and holds the ones
    /// in play (see [`super::nodes::claim`]): one transaction.
    pub(super) fn claim(&mut self) -> Result<Vec<crate::store::GameRecord>, String> {
        let Some(member) = &self.member else {
            return Err("only a cluster node takes games over".into());
        };
        let incarnation = member.incarnation.number;
        self.may_write()?;
        self.connected()?;
        let Some(db) = self.db.as_mut() else {
            return Err("no connection to PostgreSQL".into());
        };
        let txn = self.held.begin()?;
        let unsure = std::mem::take(&mut self.claim_unsure);
        let held = &self.held;
        let deadline = Deadlines::of_config(&self.config).request;
        let claimed = self.runtime.block_on(async {
            let claim = claim_in(db, incarnation, unsure, |game| held.holds(game));
            tokio::time::timeout(deadline, claim).await
        });
        let games = match claimed {
            Ok(Ok(games)) => games,
            failed => {
                // Its commit may have happened: the next claim looks for
                // games this node owns and does not hold.
                self.claim_unsure = true;
                self.held.rollback(txn);
                let Ok(Err(e)) = failed else {
                    // Given up: the connection goes with it.
                    self.previous = self.db.take().and_then(|db| db.backend().cloned());
                    return Err(format!(
                        "PostgreSQL did not answer within {} ms",
                        deadline.as_millis()
                    ));
                };
                return Err(super::describe(&e));
            }
        };
        for game in &games {
            let _ = self.held.open(game.id, game.moves.clone());
        }
        self.held.commit(txn);
        Ok(games)
    }
}

/// The games one claim takes at most: a dead node's games are shared out
/// among the survivors claim by claim.
const CLAIM_SHARE: i64 = 64;

/// Claims, in one transaction; after a claim that failed (`unsure`), also
/// the games this node owns but does not hold (`holds` says), which that
/// claim may have taken before its answer was lost.
async fn claim_in(
    db: &mut Db,
    incarnation: i64,
    unsure: bool,
    holds: impl Fn(flipline::protocol::GameId) -> bool,
) -> Result<Vec<crate::store::GameRecord>, tokio_postgres::Error> {
    db.batch("BEGIN").await?;
    let done = async {
        let mut claimed = super::nodes::claim(db, incarnation, CLAIM_SHARE)
            .await?
            .playing;
        if unsure {
            let owned = super::nodes::owned_in_play(db, incarnation).await?;
            let unheld = owned
                .into_iter()
                .filter(|&id| !holds(u64::try_from(id).unwrap_or(0)));
            claimed.extend(unheld);
        }
        super::recovery::games_among(db, &claimed).await
    }
    .await;
    match done {
        Ok(games) => {
            db.batch("COMMIT").await?;
            Ok(games)
        }
        Err(e) => {
            let _ = db.batch("ROLLBACK").await;
            Err(e)
        }
    }
}
