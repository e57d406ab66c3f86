//! Carrying out what a game's table returns: events to its audience, the
//! timers it asks for, the end's commit before what follows it (in
//! `ending.rs`).

use std::sync::Arc;
use std::time::Duration;

use actix::{ActorContext, AsyncContext, Context, SpawnHandle};
use flipline::protocol::Event;

use super::GameActor;
use crate::messages::*;
use crate::rules::table::{Effect, Timer};
use crate::service_time;
use crate::session::{Reach, SessionRef};

/// The timers a table asked for. Boxed, and only once there is one: most
/// games have no clock and nobody away.
#[derive(Default)]
pub(super) struct Timers {
    flag: Option<SpawnHandle>,
    grace: [Option<SpawnHandle>; 2],
    bot: Option<SpawnHandle>,
}

impl Timers {
    fn slot(&mut self, timer: Timer) -> &mut Option<SpawnHandle> {
        match timer {
            Timer::Flag => &mut self.flag,
            Timer::Grace(color) => &mut self.grace[crate::rules::slot(color)],
            Timer::Bot => &mut self.bot,
        }
    }
}

impl GameActor {
    /// Carries out what the table asked for, in order.
    pub(super) fn carry_out(&mut self, ctx: &mut Context<Self>, effects: Vec<Effect<SessionRef>>) {
        for effect in effects {
            match effect {
                Effect::Broadcast(events) => {
                    let text = lines(&events);
                    for session in self.table.audience() {
                        session.tell(ToSession::Deliver(Arc::clone(&text)));
                    }
                }
                Effect::Tell(session, events) => session.tell(ToSession::Deliver(lines(&events))),
                Effect::Schedule(timer, after) => self.schedule(ctx, timer, after),
                Effect::Unschedule(timer) => self.unschedule(ctx, timer),
                Effect::Think { level, turn } => self.think(ctx, level, turn),
                Effect::CommitEnd {
                    result,
                    then,
                    refused,
                } => self.commit_end(ctx, result, then, refused),
                Effect::Ended(result) => {
                    tracing::info!(game = self.id(), %result, "game over");
                    crate::metrics::game_over();
                    self.services.lobby.do_send(FromGame::Ended(self.id()));
                }
                // Not before the end is stored, which announces it: the
                // table decides the stop again then (`end_stored`).
                Effect::Stop if self.ending => {}
                Effect::Stop => ctx.stop(),
            }
        }
    }

    pub(super) fn schedule(&mut self, ctx: &mut Context<Self>, timer: Timer, after: Duration) {
        self.unschedule(ctx, timer);
        let handle = ctx.run_later(after, move |act, ctx| {
            if let Some(timers) = &mut act.timers {
                *timers.slot(timer) = None;
            }
            let effects = act.table.timer_fired(timer, service_time::now());
            act.carry_out(ctx, effects);
        });
        *self.timers.get_or_insert_with(Box::default).slot(timer) = Some(handle);
    }

    pub(super) fn unschedule(&mut self, ctx: &mut Context<Self>, timer: Timer) {
        if let Some(old) = self.timers.as_mut().and_then(|t| t.slot(timer).take()) {
            ctx.cancel_future(old);
        }
    }
}

/// Events as text, one line each.
pub(super) fn lines(events: &[Event]) -> crate::outbox::Text {
    use std::cell::RefCell;
    // Formatted into this thread's buffer and copied once into the shared
    // text: a `String` of its own would be a second allocation on every
    // move, since `Arc<str>` cannot take over a `String`'s memory.
    thread_local! {
        static FORMATTED: RefCell<String> = const { RefCell::new(String::new()) };
    }
    FORMATTED.with(|formatted| match formatted.try_borrow_mut() {
        Ok(mut text) => {
            text.clear();
            write_lines(&mut text, events);
            let shared = Arc::from(text.as_str());
            // A long text (a game's whole history) is not kept for good.
            text.shrink_to(KEPT_FORMATTING_BYTES);
            shared
        }
        // Only if formatting an event formatted events again.
        Err(_) => {
            let mut text = String::new();
            write_lines(&mut text, events);
            Arc::from(text)
        }
    })
}

/// The most bytes of formatting room each thread keeps between texts.
const KEPT_FORMATTING_BYTES: usize = 1024;

fn write_lines(text: &mut String, events: &[Event]) {
    use std::fmt::Write;
    for event in events {
        let _ = writeln!(text, "{event}");
    }
}
