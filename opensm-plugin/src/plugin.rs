//! The state of one loaded plugin, shared by the threads OpenSM calls it on (see SAFETY.md,
//! "Threads and locks"): the daemon, the routing session, the routing between the two
//! unicast callbacks, the answers the SA reads, the multicast trees, and what was logged.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LockResult, Mutex, PoisonError, RwLock};
use std::time::Duration;

use ibfabric::routing::MulticastTables;
use ibfabric::session::{QosAnswers, Routed, Session};
use opensm_sys::osm_opensm_t;

use crate::cabling;
use crate::cache_file;
use crate::commit::Pending;
use crate::config::{Config, Source};
use crate::follow_up::FollowUp;
use crate::metrics::MetricsFile;
use crate::multicast::{Groups, HeldTrees, MemberRecord, Programmed, shrink};
use crate::saved_trees::{self, SavedTrees};
use crate::sent::SentTables;
use crate::subnet::NodeRecord;
use crate::sweep_log::{self, Sl2VlCount, Sl2VlLine, SweepRecord};

/// The daemon's `osm_opensm_t`, as OpenSM passed it to `create`.
#[derive(Clone, Copy)]
pub(crate) struct Daemon(pub(crate) *mut osm_opensm_t);

// SAFETY: the pointer is OpenSM's, valid from `create` until `delete`, and the plugin never
// frees or moves what it points at. Sharing the pointer between threads is safe; every
// dereference is in a callback that OpenSM makes under its own lock (the routing and multicast
// callbacks hold `osm->lock` exclusively), which each `unsafe` block names.
unsafe impl Send for Daemon {}
// SAFETY: as for `Send`: the pointer itself is never written after `create`.
unsafe impl Sync for Daemon {}

/// The routings of the sweeps: keyed by the canonical records of the subnet, and by the
/// configuration's routing keys ([`Config::routing_keys`]) and the LMC they were made with.
pub(crate) type Routings = Session<Vec<NodeRecord>, (Config, u8)>;

/// State of one loaded plugin. Lock order: `pending` is held through `build_lid_matrices`
/// and taken first; under it `reported`, `sweep_log`, `metrics`, `plan` and `session` are
/// taken one at a time. `held_trees` is taken before `multicast` (`trees_for_plan`,
/// `tree_of_routing`).
/// Elsewhere every lock is taken alone (`tree_of_routing` releases `session` before it takes
/// `multicast`), so no two threads can wait on each other.
pub(crate) struct Plugin {
    pub(crate) osm: Daemon,
    /// The routing computed by `build_lid_matrices`, until `ucast_build_fwd_tables` writes it.
    pub(crate) pending: Mutex<Option<Pending>>,
    /// Path SLs and SL-to-VL tables of the tables in force; read by the SA's threads.
    pub(crate) answers: RwLock<Option<Arc<QosAnswers>>>,
    /// The last routing and the last full one, with what they were computed from: an unchanged
    /// subnet is not routed again, and a subnet that lost cables is repaired.
    pub(crate) session: Mutex<Routings>,
    /// Whether the saved session and trees were looked for (by the first routing pass).
    pub(crate) restore_tried: AtomicBool,
    /// The cabling plan of the configuration, while its file is unchanged.
    pub(crate) plan: Mutex<cabling::PlanCache>,
    /// The configuration last logged (warning and settings), so that the log says it once and
    /// again only when it changes, not at every sweep.
    reported: Mutex<Option<(Option<String>, String)>>,
    /// The configured `sweep_log`, as of the last routing pass that read the configuration.
    pub(crate) sweep_log: Mutex<Option<std::path::PathBuf>>,
    /// The metrics of every pass since the plugin was loaded, and the configured
    /// `metrics_file` they are written to.
    pub(crate) metrics: Mutex<MetricsFile>,
    /// The multicast trees built over the routing in force (a new routing starts from the
    /// trees the switches hold, [`Groups::hold`]).
    multicast: Mutex<Option<(Arc<Routed>, Groups)>>,
    /// What the switches hold of every group: the entries set last.
    /// Shared with the tree saver, which copies it when it runs.
    pub(crate) held_trees: Arc<Mutex<HeldTrees>>,
    /// While a staged change is between its passes: the routing it goes to and the tree
    /// entries its first pass allows (every group's tree is held to them until the last pass).
    pub(crate) staged_trees: Mutex<Option<(Arc<Routed>, MulticastTables)>>,
    /// The pass last written to every switch, to tell what a switch holds when OpenSM lost a
    /// block of it.
    pub(crate) sent: Mutex<SentTables>,
    /// After a drop pass: the drain time to wait, once OpenSM reports the pass confirmed,
    /// before the next pass is asked for.
    pub(crate) next_pass_after: Mutex<Option<Duration>>,
    /// The thread that waits out the drain time and asks OpenSM for the next pass. Dropped
    /// (stopped and joined) with the plugin, in `delete`, before OpenSM destroys its state
    /// manager (osm_opensm.c: osm_opensm_destroy).
    pub(crate) follow_up: FollowUp,
    /// The thread that writes the held trees to OpenSM's cache directory after they change
    /// ([`crate::saved_trees`]), off OpenSM's lock; dropped with the plugin as `follow_up`.
    tree_saver: FollowUp,
    /// The threads the routing runs on, and the `routing_threads` they were started for: kept
    /// across sweeps (starting them costs more than a reused routing), started again when the
    /// configuration asks for another number.
    routing_pool: Mutex<Option<(usize, Arc<rayon::ThreadPool>)>>,
    /// The SL-to-VL tables OpenSM asked for and sent since the last routing it reported done.
    pub(crate) sl2vl_wire: Sl2VlWire,
}

/// How many SL-to-VL tables (one per switch port pair and end port) OpenSM asked the plugin
/// for, and how many of them it sends — those the port does not hold yet — counted as
/// `update_sl2vl` answers and logged once the routing is reported done: what the lanes cost on
/// the wire, beside the LFT blocks the passes count.
#[derive(Debug, Default)]
pub(crate) struct Sl2VlWire {
    asked: AtomicU64,
    sent: AtomicU64,
}

impl Sl2VlWire {
    /// Counts one table asked for, and sent or not.
    pub(crate) fn count(&self, sent: bool) {
        self.asked.fetch_add(1, Ordering::Relaxed);
        if sent {
            self.sent.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The tables sent and asked for since the last call, if any were asked for; starts
    /// counting afresh.
    pub(crate) fn take(&self) -> Option<Sl2VlCount> {
        let asked = self.asked.swap(0, Ordering::Relaxed);
        let sent = self.sent.swap(0, Ordering::Relaxed);
        (asked > 0).then_some(Sl2VlCount { sent, asked })
    }
}

// The SA's threads and the sweep share the plugin: the compiler checks it may be shared.
const _: fn() = || {
    fn is_sync<T: Sync>() {}
    is_sync::<Plugin>();
};

/// The value behind a lock, also after a panic while it was held: [`crate::guard`] caught the
/// panic, and every critical section replaces its value whole, so the value is consistent.
pub(crate) fn unpoisoned<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}

impl Plugin {
    /// A plugin with nothing routed yet.
    pub(crate) fn new(osm: Daemon) -> Self {
        Self {
            osm,
            pending: Mutex::new(None),
            answers: RwLock::new(None),
            session: Mutex::new(Routings::new()),
            restore_tried: AtomicBool::new(false),
            plan: Mutex::new(cabling::PlanCache::default()),
            reported: Mutex::new(None),
            sweep_log: Mutex::new(None),
            metrics: Mutex::new(MetricsFile::default()),
            multicast: Mutex::new(None),
            held_trees: Arc::new(Mutex::new(HeldTrees::default())),
            staged_trees: Mutex::new(None),
            sent: Mutex::new(SentTables::default()),
            next_pass_after: Mutex::new(None),
            follow_up: FollowUp::default(),
            tree_saver: FollowUp::default(),
            routing_pool: Mutex::new(None),
            sl2vl_wire: Sl2VlWire::default(),
        }
    }

    /// Runs `work` on the routing threads `threads` asks for (0: every core OpenSM may run on)
    /// and returns its result with the number of threads it had. If no thread can be started,
    /// `work` runs on OpenSM's thread alone, with a warning.
    pub(crate) fn on_routing_threads<R: Send>(
        &self,
        threads: usize,
        work: impl FnOnce() -> R + Send,
    ) -> (R, usize) {
        let pool = {
            let mut kept = unpoisoned(self.routing_pool.lock());
            match &*kept {
                Some((asked, pool)) if *asked == threads => Some(Arc::clone(pool)),
                _ => match ibfabric::threads::pool(threads) {
                    Ok(pool) => {
                        let pool = Arc::new(pool);
                        *kept = Some((threads, Arc::clone(&pool)));
                        Some(pool)
                    }
                    Err(e) => {
                        log::warn!("cannot start the routing threads ({e}): routing on one");
                        *kept = None;
                        None
                    }
                },
            }
        };
        match pool {
            Some(pool) => (pool.install(work), pool.current_num_threads()),
            None => (work(), 1),
        }
    }

    /// Puts the answers of the tables now in force in place (`None` after a failure: OpenSM
    /// then routes with another engine and asks it, not us).
    pub(crate) fn set_answers(&self, answers: Option<Arc<QosAnswers>>) {
        *unpoisoned(self.answers.write()) = answers;
    }

    /// Records a routing pass: appends `record` to the sweep log and rewrites the metrics
    /// file, each if configured.
    pub(crate) fn log_sweep(&self, record: &SweepRecord) {
        if let Some(path) = &*unpoisoned(self.sweep_log.lock()) {
            sweep_log::append(path, record);
        }
        let mut metrics = unpoisoned(self.metrics.lock());
        metrics.metrics.observe(record);
        metrics.write();
    }

    /// Records the SL-to-VL tables OpenSM asked for and sent after the last routing pass: a line
    /// after its record in the sweep log, and the metrics' sums.
    pub(crate) fn log_sl2vl(&self, tables: Sl2VlCount) {
        if let Some(path) = &*unpoisoned(self.sweep_log.lock()) {
            let line = Sl2VlLine {
                time: sweep_log::now(),
                sl2vl_tables: tables,
            };
            sweep_log::append_line(path, &line.line());
        }
        let mut metrics = unpoisoned(self.metrics.lock());
        metrics.metrics.observe_sl2vl(tables);
        metrics.write();
    }

    /// Logs the configuration in force, on one line, after a warning if its file could not be
    /// read; only when this differs from what was logged last.
    pub(crate) fn report_config(&self, config: &Config, source: &Source) {
        let report = (source.warning(), config.summary());
        let mut reported = unpoisoned(self.reported.lock());
        if reported.as_ref() == Some(&report) {
            return;
        }
        if let Some(warning) = &report.0 {
            log::warn!("{warning}");
        }
        log::info!("configuration in force: {}", report.1);
        *reported = Some(report);
    }

    /// The trees of the groups the switches hold, as they hold them and as `routed` builds
    /// them (kept for the tree requests after its routing pass), for the plan of a change.
    pub(crate) fn trees_for_plan(
        &self,
        routed: &Arc<Routed>,
    ) -> (MulticastTables, MulticastTables) {
        let held = unpoisoned(self.held_trees.lock());
        let mut state = unpoisoned(self.multicast.lock());
        if !matches!(&*state, Some((r, _)) if Arc::ptr_eq(r, routed)) {
            *state = Some((Arc::clone(routed), Groups::default()));
        }
        let (_, groups) = state.as_mut().expect("set above");
        let basis = &routed.multicast;
        (held.tables(&basis.fabric), held.rebuilt(basis, groups))
    }

    /// `programmed` as the staged change in progress allows it ([`shrink`]), if one is.
    pub(crate) fn staged_tree(&self, mlid: u16, programmed: Programmed) -> Programmed {
        match &*unpoisoned(self.staged_trees.lock()) {
            Some((routed, first)) => shrink(programmed, &routed.multicast.fabric, mlid, first),
            None => programmed,
        }
    }

    /// The group's tree over the routing in force, on the loads of the trees built over it;
    /// kept from the tree the switches hold when this routing has none of the group yet.
    pub(crate) fn tree_of_routing(
        &self,
        mlid: u16,
        members: &[MemberRecord],
    ) -> Result<Programmed, String> {
        let routed = unpoisoned(self.session.lock())
            .last()
            .map(Arc::clone)
            .ok_or("no routing of this engine in force")?;
        // `held_trees` before `multicast`, as in `trees_for_plan`.
        let held = unpoisoned(self.held_trees.lock());
        let mut state = unpoisoned(self.multicast.lock());
        let current = matches!(&*state, Some((r, _)) if Arc::ptr_eq(r, &routed));
        if !current {
            *state = Some((Arc::clone(&routed), Groups::default()));
        }
        let (_, groups) = state.as_mut().expect("set above");
        groups.hold(&routed.multicast, mlid, held.entries(mlid));
        drop(held);
        groups.program(&routed.multicast, mlid, members)
    }

    /// Records what was set for group `mlid` as what the switches hold, and has it saved: the
    /// saver copies the held trees when it runs, so a burst of trees (every group after a
    /// routing) is saved once or twice, not once per group.
    pub(crate) fn record_tree(&self, mlid: u16, members: &[MemberRecord], set: &[(u64, Vec<u8>)]) {
        unpoisoned(self.held_trees.lock()).record(mlid, members, set);
        let held = Arc::clone(&self.held_trees);
        let path = cache_file::cache_dir().join(saved_trees::FILE_NAME);
        let scheduled = self.tree_saver.schedule(Duration::ZERO, move || {
            let guard = unpoisoned(held.lock());
            let trees = SavedTrees::of(&guard);
            drop(guard);
            if let Err(e) = saved_trees::save(&path, &trees) {
                log::warn!(
                    "multicast trees not saved to {}: {e}; after a restart the first trees \
                     are built afresh",
                    path.display()
                );
            }
        });
        if let Err(e) = scheduled {
            log::warn!("cannot start the thread that saves the multicast trees: {e}");
        }
    }

    /// After a restart (the first routing pass): takes the trees saved before it as what the
    /// switches hold. A file that cannot be used is logged and ignored.
    pub(crate) fn restore_trees(&self) {
        let path = cache_file::cache_dir().join(saved_trees::FILE_NAME);
        match saved_trees::load(&path) {
            Ok(Some(saved)) => {
                let groups = saved
                    .groups
                    .into_iter()
                    .map(|g| (g.mlid, g.members, g.entries));
                let taken = unpoisoned(self.held_trees.lock()).restore(groups);
                log::info!(
                    "multicast trees restored from {}: {taken} groups as the switches hold them",
                    path.display()
                );
            }
            Ok(None) => {}
            Err(e) => log::warn!("saved multicast trees ignored: {e}"),
        }
    }
}
