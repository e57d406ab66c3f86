//! The one writer of the terminal. Every line flip shows, the server's and its
//! own, goes out here whole and ended by a line feed, in the order given:
//! while the interactive client has a prompt (rustyline's external printer is
//! attached) through the printer, which draws it above the prompt and the
//! prompt again below; otherwise straight to standard output.
//!
//! The printer hands each message to the editor through a channel of one
//! place and blocks while it is full, which it stays until the editor reads a
//! prompt again. So that no thread waits on that (the reader thread must keep
//! taking server lines in whatever the person is doing), messages go into a
//! queue here, and a thread of this module alone feeds them to the printer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustyline::ExternalPrinter;

/// The external printer, boxed: rustyline names its type only through a
/// private trait.
pub type Printer = Box<dyn ExternalPrinter + Send>;

/// A message that redraws the prompt and adds no line. The printer clears the
/// prompt's rows and leaves the cursor where the prompt began; this goes up a
/// row and comes down again (a line feed is a carriage return too, the
/// terminal's output processing being on), and the prompt is drawn anew: its
/// clocks with it. Outside a prompt it moves the cursor up and back.
const REDRAW: &str = "\x1b[A\n";

/// Not a message: where the printer thread arms the leave asked of the
/// prompt's thread (see [`leave_through_prompt`]). Empty, which no message
/// shown is (each ends with a line feed).
const ARM: &str = "";

#[derive(Default)]
struct Queue {
    /// Messages not yet handed to the printer, oldest first.
    waiting: VecDeque<String>,
    /// Whether the printer thread is running (a printer is attached).
    attached: bool,
    /// Whether the printer thread holds a message it has not handed over.
    printing: bool,
    /// Whether the printer thread holds off (a question is being answered
    /// below its prompt, see [`ask`]): what comes meanwhile waits.
    paused: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    waiting: VecDeque::new(),
    attached: false,
    printing: false,
    paused: false,
});

/// Signalled when a message is queued and when the queue empties.
static CHANGED: Condvar = Condvar::new();

fn queue() -> MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Shows `lines`, each whole and on a line of its own.
pub fn show(lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let mut queue = queue();
    if queue.attached {
        queue.waiting.push_back(text);
        CHANGED.notify_all();
    } else {
        crate::out::write_text(&text);
    }
}

/// Shows `lines` from the thread that runs the prompt, between two prompts:
/// after what is queued (within [`DRAIN_WAIT`]), and straight to the
/// terminal, since the editor would show a message only once it has read the
/// lines typed ahead, after their prompts.
pub fn show_now(lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let mut queue = wait_drained(queue(), Instant::now() + DRAIN_WAIT);
    let mut text = lines.join("\n");
    text.push('\n');
    // Held while writing, so that the printer thread waits.
    queue.printing = true;
    crate::out::write_text(&text);
    queue.printing = false;
}

/// `queue` once nothing is waiting or being printed, or `deadline` passed.
fn wait_drained(
    mut queue: MutexGuard<'static, Queue>,
    deadline: Instant,
) -> MutexGuard<'static, Queue> {
    while (!queue.waiting.is_empty() && !queue.paused) || queue.printing {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        queue = match CHANGED.wait_timeout(queue, left) {
            Ok((guard, _)) => guard,
            Err(e) => e.into_inner().0,
        };
    }
    queue
}

/// Asks a question from the thread that runs the prompt, between two
/// prompts: `question` is written after what is queued (within
/// [`DRAIN_WAIT`]), with no line feed, and `answer` reads the answer; what
/// comes to be shown meanwhile waits, so that nothing is drawn in the
/// middle of it. The line is ended after.
pub fn ask<T>(question: &str, answer: impl FnOnce() -> T) -> T {
    {
        let mut queue = wait_drained(queue(), Instant::now() + DRAIN_WAIT);
        queue.paused = true;
        crate::out::write_text(question);
    }
    let answered = answer();
    crate::out::write_text("\n");
    queue().paused = false;
    CHANGED.notify_all();
    answered
}

/// Has the prompt drawn again (its clocks with it) if a printer is attached
/// and nothing else waits to be drawn, which would draw it anyway.
pub fn redraw() {
    let mut queue = queue();
    if queue.attached && !queue.paused && !queue.printing && queue.waiting.is_empty() {
        queue.waiting.push_back(REDRAW.to_string());
        CHANGED.notify_all();
    }
}

/// Shows one line.
pub fn line(text: impl Into<String>) {
    show(&[text.into()]);
}

/// From now on, what is shown goes through `printer` (a prompt is up, or
/// about to be, most of the time).
pub fn attach(mut printer: Printer) {
    queue().attached = true;
    std::thread::spawn(move || {
        while let Some(message) = next_message() {
            if message == ARM {
                LEAVE_ARMED.store(true, Ordering::SeqCst);
            // A printer that fails (the editor gone) leaves standard output.
            } else if printer.print(message.clone()).is_err() {
                crate::out::write_text(&message);
            }
            queue().printing = false;
            CHANGED.notify_all();
        }
    });
}

/// The next message for the printer thread; `None` once detached.
fn next_message() -> Option<String> {
    let mut queue = queue();
    loop {
        if !queue.attached {
            return None;
        }
        if let Some(message) = (!queue.paused).then(|| queue.waiting.pop_front()).flatten() {
            queue.printing = true;
            return Some(message);
        }
        queue = CHANGED.wait(queue).unwrap_or_else(|e| e.into_inner());
    }
}

/// Asks the editor to end the process as it next draws the prompt, once
/// everything queued is drawn: two redraws go first (the printer hands the
/// second over only once the editor has taken the first, and so all before
/// it), then the leave is armed, then a redraw that surely comes after.
/// Ending there, with the prompt's rows cleared and nothing written yet,
/// nothing is drawn after the reason. `false` when no printer is attached.
pub fn leave_through_prompt() -> bool {
    let mut queue = queue();
    if !queue.attached || queue.paused {
        return false;
    }
    for message in [REDRAW, REDRAW, ARM, REDRAW] {
        queue.waiting.push_back(message.to_string());
    }
    CHANGED.notify_all();
    true
}

/// Set by the printer thread once everything shown before a leave asked
/// through [`leave_through_prompt`] is drawn.
static LEAVE_ARMED: AtomicBool = AtomicBool::new(false);

/// Whether everything shown before the leave asked is drawn: the prompt's
/// thread may end the process as it next draws the prompt.
pub fn leave_armed() -> bool {
    LEAVE_ARMED.load(Ordering::SeqCst)
}

/// How long [`detach`] waits for the editor to draw what it was given.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Waits until everything queued is drawn (within [`DRAIN_WAIT`]), then
/// writes to standard output directly from now on. Two redraws go last: the
/// printer hands the second over only once the editor has taken the first,
/// and so everything before it.
pub fn detach() {
    let deadline = Instant::now() + DRAIN_WAIT;
    let mut queue = queue();
    if !queue.attached {
        return;
    }
    queue.waiting.push_back(REDRAW.to_string());
    queue.waiting.push_back(REDRAW.to_string());
    CHANGED.notify_all();
    let mut queue = wait_drained(queue, deadline);
    queue.attached = false;
    // What the editor did not take in time is written out here instead.
    let left: Vec<String> = (queue.waiting.drain(..))
        .filter(|m| m != REDRAW && m != ARM)
        .collect();
    CHANGED.notify_all();
    drop(queue);
    for message in left {
        crate::out::write_text(&message);
    }
}

/// The sink the connection's reader writes to.
pub struct ScreenSink;

impl crate::play::link::Sink for ScreenSink {
    fn show(&mut self, lines: Vec<String>) {
        show(&lines);
    }
}
