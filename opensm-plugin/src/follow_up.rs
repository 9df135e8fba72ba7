//! The wait between the passes of a staged change, off OpenSM's threads.
//!
//! The next pass may start only once every switch confirmed the last one and the packets sent
//! along the entries it dropped have left the fabric. OpenSM reports the confirmation
//! (`OSM_EVENT_ID_UCAST_ROUTING_DONE`, after it waited for every MAD of the pass) on its state
//! manager's thread, which must not sleep through the drain time: it would hold off traps and
//! sweeps. One thread of the plugin waits instead and then asks OpenSM for the next sweep.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// An action to run once, later.
type Action = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    due: Option<(Instant, Action)>,
    stop: bool,
}

/// One pending action at a time, run on the plugin's own thread when its time comes; dropping
/// it stops the thread without running what is still pending.
#[derive(Default)]
pub struct FollowUp {
    shared: Arc<(Mutex<State>, Condvar)>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The state behind the lock, also after a panic while it was held (every critical section
/// leaves it whole).
fn lock(shared: &(Mutex<State>, Condvar)) -> std::sync::MutexGuard<'_, State> {
    shared
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FollowUp {
    /// Runs `action` after `after`, replacing an action still pending (a newer pass supersedes
    /// the follow-up of an older one). Starts the thread on first use.
    ///
    /// # Errors
    /// The thread could not be started (the action is not run).
    pub fn schedule(
        &self,
        after: Duration,
        action: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_none() {
            let shared = Arc::clone(&self.shared);
            *thread = Some(
                std::thread::Builder::new()
                    .name("osmlayered-follow-up".into())
                    .spawn(move || run(&shared))?,
            );
        }
        lock(&self.shared).due = Some((Instant::now() + after, Box::new(action)));
        self.shared.1.notify_all();
        Ok(())
    }

    /// Whether an action waits to be run.
    pub fn pending(&self) -> bool {
        lock(&self.shared).due.is_some()
    }
}

/// The thread: waits for an action's time (or the stop), runs it outside the lock.
fn run(shared: &(Mutex<State>, Condvar)) {
    let mut state = lock(shared);
    loop {
        if state.stop {
            return;
        }
        let Some(at) = state.due.as_ref().map(|(at, _)| *at) else {
            state = shared.1.wait(state).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let now = Instant::now();
        if now < at {
            state = shared
                .1
                .wait_timeout(state, at - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        let (_, action) = state.due.take().expect("due checked above");
        drop(state);
        // A panic must not end the thread silently with the lock poisoned; the action logs
        // its own failures.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(action));
        state = lock(shared);
    }
}

impl Drop for FollowUp {
    fn drop(&mut self) {
        lock(&self.shared).stop = true;
        self.shared.1.notify_all();
        let thread = self.thread.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn an_action_runs_once_after_its_time() {
        let follow_up = FollowUp::default();
        let (tx, rx) = mpsc::channel();
        let scheduled = Instant::now();
        follow_up
            .schedule(Duration::from_millis(50), move || {
                tx.send(Instant::now()).unwrap()
            })
            .unwrap();
        let ran = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(ran - scheduled >= Duration::from_millis(50));
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        assert!(!follow_up.pending());
    }

    #[test]
    fn a_newer_action_replaces_a_pending_one() {
        let follow_up = FollowUp::default();
        let (tx, rx) = mpsc::channel();
        let first = tx.clone();
        follow_up
            .schedule(Duration::from_secs(3600), move || first.send(1).unwrap())
            .unwrap();
        follow_up
            .schedule(Duration::from_millis(10), move || tx.send(2).unwrap())
            .unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 2);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    }

    #[test]
    fn dropping_it_stops_without_running_what_is_pending() {
        let follow_up = FollowUp::default();
        let (tx, rx) = mpsc::channel();
        follow_up
            .schedule(Duration::from_secs(3600), move || tx.send(()).unwrap())
            .unwrap();
        drop(follow_up);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    }

    #[test]
    fn a_panicking_action_leaves_the_thread_running() {
        let follow_up = FollowUp::default();
        follow_up
            .schedule(Duration::ZERO, || panic!("action failed"))
            .unwrap();
        while follow_up.pending() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (tx, rx) = mpsc::channel();
        follow_up
            .schedule(Duration::from_millis(20), move || tx.send(()).unwrap())
            .unwrap();
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
}
