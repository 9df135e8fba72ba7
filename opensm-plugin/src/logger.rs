//! The `log` facade on OpenSM's log: the core's `log::info!` etc. end up in the daemon's log
//! file (`-f`), prefixed with `layered: `.

use std::ffi::c_int;
use std::sync::atomic::{AtomicPtr, Ordering};

use opensm_sys::{OSM_LOG_DEBUG, OSM_LOG_ERROR, OSM_LOG_INFO, OSM_LOG_VERBOSE, osm_log, osm_log_t};

/// Writes `log` records to an `osm_log_t`, or nowhere while none is attached.
pub(crate) struct OsmLogger {
    target: AtomicPtr<osm_log_t>,
}

static LOGGER: OsmLogger = OsmLogger {
    target: AtomicPtr::new(std::ptr::null_mut()),
};

/// OpenSM's bit for a `log` level (osm_log.h: ERROR 0x01, INFO 0x02, VERBOSE 0x04,
/// DEBUG 0x08). Warnings are errors to OpenSM's filter, so they are not lost at the
/// default level (ERROR | INFO).
fn osm_level(level: log::Level) -> u8 {
    let bit = match level {
        log::Level::Error | log::Level::Warn => OSM_LOG_ERROR,
        log::Level::Info => OSM_LOG_INFO,
        log::Level::Debug => OSM_LOG_VERBOSE,
        log::Level::Trace => OSM_LOG_DEBUG,
    };
    bit as u8
}

/// Sends the `log` facade to `osm_log` (once per process; later calls re-attach).
///
/// # Safety
/// `target` must point at the daemon's `osm->log` and stay valid until [`detach`] is called.
pub(crate) unsafe fn attach(target: *mut osm_log_t) {
    LOGGER.target.store(target, Ordering::Release);
    // Only the first plugin instance of the process installs the logger; OpenSM loads a
    // plugin once, so this is the normal case, and a second `set_logger` is harmless.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Trace);
}

/// Stops logging into OpenSM (before `delete` returns and OpenSM `dlclose`s the library).
pub(crate) fn detach() {
    log::set_max_level(log::LevelFilter::Off);
    LOGGER.target.store(std::ptr::null_mut(), Ordering::Release);
}

impl log::Log for OsmLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        let target = self.target.load(Ordering::Acquire);
        if target.is_null() {
            return false;
        }
        // SAFETY: a non-null target is the daemon's `osm->log`, valid between `attach` and
        // `detach` (see `attach`). Reading the level is what `osm_log_is_active`
        // (osm_log.h) does.
        let active = unsafe { (*target).level };
        active & osm_level(metadata.level()) != 0
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let target = self.target.load(Ordering::Acquire);
        if target.is_null() {
            return;
        }
        // osm_log is line-oriented: one record, one line.
        let line = format!("layered: {}", record.args()).replace('\n', "; ");
        let len = c_int::try_from(line.len()).unwrap_or(c_int::MAX);
        // SAFETY: `target` is valid (see `enabled`). "%.*s\n" prints at most `len` bytes of
        // `line`, so the text is never parsed as a format and needs no NUL terminator.
        unsafe {
            osm_log(
                target,
                osm_level(record.level()),
                c"%.*s\n".as_ptr(),
                len,
                line.as_ptr(),
            );
        }
    }

    fn flush(&self) {}
}
