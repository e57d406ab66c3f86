//! The login deadline: a connection that has neither logged in nor begun
//! watching a game `login_deadline_secs` after it connected is closed, so
//! that silent sockets give their places back long before the idle timeout.
//!
//! No timer per connection: each thread keeps the connections it started in
//! a queue, in the order they came (so in the order their deadlines fall),
//! and one task per thread sleeps until the first deadline, tells every
//! connection whose deadline has passed to look at itself, and sleeps again;
//! it ends when the queue is empty and starts again with the next
//! connection. A connection that logged in long ago stays in the queue until
//! its deadline (16 bytes), which bounds the queue by the connections made
//! within one deadline.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::Arc;

use actix::{ActorContext, Context, Handler, Message, WeakAddr};
use flipline::protocol::Reason;

use super::Session;
use super::limits::Moment;
use crate::reload::live::Live;

thread_local! {
    /// The connections started on this thread, with the moment each came.
    static WAITING: RefCell<VecDeque<(Moment, WeakAddr<Session>)>> =
        const { RefCell::new(VecDeque::new()) };
    /// Whether this thread's task walks the queue now.
    static WALKING: Cell<bool> = const { Cell::new(false) };
}

/// Puts a session that has just started on this thread in the queue, its
/// deadline counted from `came`. A TLS connection came before the sessions
/// that started during its handshake: it goes in its place, so that the
/// queue stays in the order the deadlines fall (usually at the back).
pub(super) fn expect_login(session: WeakAddr<Session>, live: &Arc<Live>, came: Moment) {
    WAITING.with(|waiting| {
        let mut waiting = waiting.borrow_mut();
        let place = waiting
            .iter()
            .rposition(|(earlier, _)| *earlier <= came)
            .map_or(0, |at| at + 1);
        waiting.insert(place, (came, session));
    });
    if !WALKING.with(|walking| walking.replace(true)) {
        actix::spawn(walk(Arc::clone(live)));
    }
}

/// Tells each session in the queue, when its deadline has passed, to check
/// itself; ends once the queue is empty.
async fn walk(live: Arc<Live>) {
    loop {
        // Read on each round: a deadline changed by SIGHUP counts at once.
        let deadline = live.login_deadline();
        let Some(first) = WAITING.with(|w| w.borrow().front().map(|(came, _)| *came)) else {
            break;
        };
        let left = deadline.saturating_sub(first.elapsed());
        if !left.is_zero() {
            tokio::time::sleep(left).await;
            continue;
        }
        for session in due(deadline) {
            if let Some(session) = session.upgrade() {
                session.do_send(LoginDue);
            }
        }
    }
    // Nothing waits between the last look at the queue and this: the thread
    // runs one task at a time, so no connection came meanwhile.
    WALKING.with(|walking| walking.set(false));
    WAITING.with(|waiting| waiting.borrow_mut().shrink_to_fit());
}

/// Takes the sessions whose deadline has passed off the queue.
fn due(deadline: std::time::Duration) -> Vec<WeakAddr<Session>> {
    WAITING.with(|waiting| {
        let mut waiting = waiting.borrow_mut();
        let mut due = Vec::new();
        while let Some((came, _)) = waiting.front()
            && came.elapsed() >= deadline
        {
            if let Some((_, session)) = waiting.pop_front() {
                due.push(session);
            }
        }
        due
    })
}

/// The session's login deadline has passed.
#[derive(Message)]
#[rtype(result = "()")]
struct LoginDue;

impl Handler<LoginDue> for Session {
    type Result = ();

    /// Closes the connection unless it logged in or watches a game: a
    /// spectator needs no name (`WATCH` needs no `LOGIN`), and once past the
    /// deadline it is left to the idle timeout like anyone.
    fn handle(&mut self, _: LoginDue, ctx: &mut Context<Self>) {
        if self.name.is_some() || !self.watching.is_empty() {
            return;
        }
        let secs = self.shared.live.login_deadline().as_secs();
        let text = format!("closing: no LOGIN within {secs} s");
        let notice = format!("INFO {}\n", Reason::LoginDeadline.append_to(&text));
        self.send_text(ctx, Arc::from(notice));
        ctx.stop();
    }
}
