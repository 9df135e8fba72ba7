//! What the plugin does on OpenSM's events: after a routing pass, the count of the SL-to-VL
//! tables it cost; once a pass of a staged change is on the wire, the wait for the next one.
//!
//! A pass is on the wire at the end of its heavy sweep (`SUBNET_UP`): OpenSM has waited for
//! every LFT and SL-to-VL MAD before it reports the routing done, and writes the multicast
//! trees after that, waiting for their MADs too, before the sweep ends. The drain time counts
//! from there, so that copies sent along tree entries the pass took away have left as well. A
//! reroute (OpenSM's console) routes without the trees and without the end of a sweep: its
//! pass is on the wire once the routing is reported done.

use opensm_sys::osm_sm_sweep;

use crate::plugin::{Plugin, unpoisoned};

impl Plugin {
    /// A routing pass was confirmed by every switch (`UCAST_ROUTING_DONE`); `reroute`: it was
    /// a reroute, which ends there.
    pub(crate) fn on_routing_done(&self, reroute: bool) {
        // OpenSM programs the SL-to-VL tables after the routing and waits for them before it
        // reports the routing done (osm_state_mgr.c): the count is this pass's.
        if let Some(count) = self.sl2vl_wire.take() {
            log::info!(
                "SL-to-VL tables: {} of {} sent (the others held their rows already)",
                count.sent,
                count.asked
            );
            self.log_sl2vl(count);
        }
        if reroute {
            self.ask_for_next_pass();
        }
    }

    /// A heavy sweep ended (`SUBNET_UP`): its multicast trees are written too.
    pub(crate) fn on_sweep_end(&self) {
        self.ask_for_next_pass();
    }

    /// After a pass that another must follow: asks OpenSM for the next pass once the drain
    /// time has passed, from the plugin's own thread (OpenSM's state manager must not sleep).
    fn ask_for_next_pass(&self) {
        let Some(drain) = unpoisoned(self.next_pass_after.lock()).take() else {
            return;
        };
        let daemon = self.osm;
        let scheduled = self.follow_up.schedule(drain, move || {
            // The whole `Daemon` (Send), not its raw pointer field, is moved into the thread.
            let daemon = daemon;
            log::info!("staged change: drain time over, asking OpenSM for the next pass");
            // SAFETY: the daemon outlives the follow-up thread, which `delete` stops before
            // OpenSM destroys its state manager. Setting the flag and signalling the state
            // manager without its lock is what OpenSM's console does for `reroute`
            // (osm_console.c); the sweep reads the flag on the state manager's thread.
            unsafe {
                (*daemon.0).subn.force_heavy_sweep = 1;
                osm_sm_sweep(&raw mut (*daemon.0).sm);
            }
        });
        match scheduled {
            Ok(()) => log::info!(
                "staged change: pass confirmed by every switch; the next pass in {} ms",
                drain.as_millis()
            ),
            Err(e) => log::error!(
                "staged change: cannot start the thread that asks for the next pass ({e}); \
                 the new entries are written at the next sweep"
            ),
        }
    }
}
