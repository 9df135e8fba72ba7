//! Progress on stderr for runs that take a while: a spinner naming the phase (routing layers,
//! assigning VLs, analysing), shown only once a run has lasted a second, only when stderr is a
//! terminal, and never with `-q`. Scripts and pipes see nothing of it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Cleared by `-q` (see [`super::Verbosity::init_logging`]).
static ALLOWED: AtomicBool = AtomicBool::new(true);

/// How long a run goes before its progress shows: shorter runs would only flicker.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Allows or forbids progress output for the rest of the process.
pub fn allow(allowed: bool) {
    ALLOWED.store(allowed, Ordering::Relaxed);
}

/// Whether a run would show progress: allowed, and stderr a terminal.
pub fn enabled() -> bool {
    ALLOWED.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// The progress of one run; cleared from the terminal when dropped.
pub struct Progress {
    bar: ProgressBar,
    /// Set when the run is over, so that the delayed start cannot show a finished run.
    done: Arc<Mutex<bool>>,
}

impl Progress {
    /// Starts a run in `phase`; it appears after [`SHOW_AFTER`] if [`enabled`].
    pub fn start(phase: &str) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(phase.to_string());
        let done = Arc::new(Mutex::new(false));
        if enabled() {
            let (bar, done) = (bar.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                std::thread::sleep(SHOW_AFTER);
                let done = done.lock().unwrap_or_else(|e| e.into_inner());
                if !*done {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(Duration::from_millis(120));
                }
            });
        }
        Self { bar, done }
    }

    /// Moves on to the next phase.
    pub fn phase(&self, phase: &str) {
        self.bar.set_message(phase.to_string());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done = true;
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests run with stderr captured or redirected: no progress, and a run that ends before
    /// the delay leaves nothing behind.
    #[test]
    fn a_run_not_on_a_terminal_stays_hidden() {
        if std::io::stderr().is_terminal() {
            return;
        }
        assert!(!enabled());
        let progress = Progress::start("routing layers");
        progress.phase("analysing");
        assert!(progress.bar.is_hidden());
        drop(progress);
    }

    #[test]
    fn quiet_forbids_progress_even_on_a_terminal() {
        allow(false);
        assert!(!enabled());
        allow(true);
    }
}
