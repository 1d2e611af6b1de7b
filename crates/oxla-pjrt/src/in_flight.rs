//! Work still running when its thread, or the process, ends.
//!
//! PJRT executes (and, on GPUs, copies host data) asynchronously on the
//! plugin's threads. When a program's `main` returns with work in flight,
//! `exit()` runs the C++ static destructors of the plugin while those
//! threads still use what they destroy, and the process dies of a signal
//! (seen: a worker of XLA's CPU plugin generating a oneDNN GEMM kernel
//! with Xbyak while `exit()` ran the kernel table's destructor, which that
//! worker had registered moments before, freeing the generator and
//! unmapping its code buffer). Rust drops no static (the default client
//! lives in one), and an `atexit` handler would come too late: exit
//! handlers run newest first, and the plugin registers many lazily, from
//! its worker threads, during that very work.
//!
//! What runs before every exit handler is the exiting thread's
//! thread-local destructors (glibc's `exit()` calls them first, for a
//! return from `main` and `std::process::exit` alike). So each thread
//! keeps the events of the work it started and nothing else waits for
//! until they are ready, and its thread-local [`ThreadWork`] waits for them
//! when the thread ends: at process exit for the exiting thread, at thread
//! exit for the others (so a thread joined before `main` returns has waited
//! too). The wait is bounded by [`WAIT_LIMIT`], so that a computation that
//! never ends (one waiting for data that never comes) cannot hang the exit.
//!
//! Asking the plugin for an event on every execution costs more than the
//! rest of oxla's dispatch, so the work is found through its results
//! instead: each device's first output of an execution (and a buffer
//! copied to a device) is *unsettled* until its readiness is seen
//! (`block_until_ready`, a copy to the host) or a later execution takes it
//! as an argument (that execution waits for it, and its own outputs answer
//! for both). A buffer dropped or deleted while unsettled hands its ready
//! event to this list first. A training loop, whose outputs feed the next
//! step or are read, asks for no event at all. Only a program without
//! outputs asks for completion events, and those go here too. What this
//! does not see: an unsettled buffer that is never dropped (leaked, or held
//! in a `static`) when the process exits.
//!
//! Keeping events costs no C call on the hot path: all kept events are
//! checked, and the ready ones dropped, when the list reaches
//! [`CHECK_ALL_AT`] or twice the count that stayed after the last check.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::event::Event;

/// How long a thread's end waits for the work it started.
const WAIT_LIMIT: Duration = Duration::from_secs(600);

/// Below this many kept events, none are checked.
const CHECK_ALL_AT: usize = 32;

/// One thread's work in flight; waits for it when the thread ends.
#[derive(Default)]
struct ThreadWork {
    events: RefCell<Events>,
    /// Work counted by [`Counted`] tokens (those whose event is the
    /// caller's to return).
    counted: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Events {
    pending: Vec<Event>,
    /// Check every kept event once there are this many.
    check_all_at: usize,
}

impl Events {
    /// Keeps `event`, first dropping the kept events that are ready when
    /// the list has grown to `check_all_at`.
    fn keep(&mut self, event: Event) {
        if self.pending.len() >= self.check_all_at.max(CHECK_ALL_AT) {
            self.pending.retain(|e| !is_done(e));
            self.check_all_at = 2 * self.pending.len();
        }
        self.pending.push(event);
    }
}

/// Whether `event` is ready (or cannot say: nothing to wait for then).
fn is_done(event: &Event) -> bool {
    event.is_ready().unwrap_or(true)
}

impl Drop for ThreadWork {
    fn drop(&mut self) {
        let events = &mut self.events.get_mut().pending;
        let start = Instant::now();
        loop {
            events.retain(|e| !is_done(e));
            let counted = self.counted.load(Ordering::Acquire);
            if events.is_empty() && counted == 0 {
                return;
            }
            if start.elapsed() >= WAIT_LIMIT {
                eprintln!(
                    "oxla-pjrt: {} execution(s) or transfer(s) still running {} s after their \
                     thread ended; not waiting for them any longer",
                    events.len() + counted,
                    WAIT_LIMIT.as_secs()
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

thread_local! {
    static THREAD_WORK: ThreadWork = ThreadWork::default();
}

/// Keeps `event` as the current thread's work until it is ready; waits for
/// it here when the thread's storage is already being torn down (a call
/// from another thread-local destructor).
pub(crate) fn track(event: Event) {
    let mut event = Some(event);
    let _ = THREAD_WORK.try_with(|work| {
        if let Some(event) = event.take() {
            work.events.borrow_mut().keep(event);
        }
    });
    if let Some(event) = event {
        // Its result is its owner's to report (a buffer's readiness, a wait).
        let _ = event.wait();
    }
}

/// One unit of the current thread's work, for work whose event goes to
/// the caller: it is in flight until the token is dropped (from the
/// event's `on_ready` callback).
pub(crate) struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// Counts one unit of work as the current thread's until the token is
/// dropped; `None` when the thread's storage is being torn down (the
/// caller then waits for the work itself).
pub(crate) fn begin() -> Option<Counted> {
    THREAD_WORK
        .try_with(|work| {
            work.counted.fetch_add(1, Ordering::Relaxed);
            Counted(work.counted.clone())
        })
        .ok()
}
