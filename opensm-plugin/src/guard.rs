//! Panics never unwind into C: every entry point runs inside [`guard`], which logs the panic
//! — its message and where it happened — and returns the entry point's fallback instead.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// Where the last panic on this thread happened (`file:line:column`), as the panic hook
    /// saw it: a caught panic carries only its payload.
    static PANICKED_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once per process, a panic hook that records each panic's location for
/// [`guard`], then runs the hook that was in place (the default one prints to stderr, as
/// before).
pub(crate) fn record_panic_locations() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let at = info.location().map(ToString::to_string);
            PANICKED_AT.with(|cell| *cell.borrow_mut() = at);
            previous(info);
        }));
    });
}

/// Runs `f`; on panic logs `what`, the panic message and where it happened, and returns
/// `fallback` instead of unwinding into C.
pub(crate) fn guard<R>(what: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    // A location left by a panic caught elsewhere is not this one's.
    PANICKED_AT.with(|cell| cell.borrow_mut().take());
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            let at = PANICKED_AT
                .with(|cell| cell.borrow_mut().take())
                .map(|at| format!(" at {at}"))
                .unwrap_or_default();
            log::error!("{what}: internal error (panic: {message}){at}; falling back");
            fallback
        }
    }
}

/// The message of a panic's payload (`panic!` with a literal or with arguments).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_gives_the_fallback() {
        record_panic_locations();
        assert_eq!(guard("test", 7, || panic!("boom")), 7);
    }

    #[test]
    fn no_panic_gives_the_value() {
        assert_eq!(guard("test", 7, || 3), 3);
    }

    #[test]
    fn the_hook_records_where_the_panic_happened() {
        record_panic_locations();
        let line = line!() + 1;
        let caught = catch_unwind(|| panic!("boom"));
        assert!(caught.is_err());
        let at = PANICKED_AT.with(|cell| cell.borrow_mut().take()).unwrap();
        assert!(at.starts_with(&format!("{}:{line}:", file!())), "{at}");
    }

    #[test]
    fn messages_of_both_payload_kinds_are_read() {
        let literal = catch_unwind(|| panic!("literal")).unwrap_err();
        let formatted = catch_unwind(|| panic!("{}", 42)).unwrap_err();
        assert_eq!(panic_message(literal.as_ref()), "literal");
        assert_eq!(panic_message(formatted.as_ref()), "42");
    }
}
