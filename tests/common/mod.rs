//! Test harness for the real InfiniBand stack: an ibsim fabric simulator per test, and the
//! diagnostic tools (`ibnetdiscover`, `iblinkinfo`, ...) run against it through umad2sim.
//!
//! Every simulator gets its own `IBSIM_SOCKNAME` and scratch directory, runs under `timeout`
//! (so a crashed test cannot leave it behind) and is stopped by PID when the handle drops.
#![allow(dead_code)]

pub mod chromium;
pub mod fabrics;
pub mod install_files;
pub mod mcast;
pub mod plugin;
pub mod promtool;
pub mod readback;
pub mod routed;
pub mod shared_fixtures;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The fabric a topology spec (`slimfly:q=5`) builds.
pub fn generated(spec: &str) -> ibfabric::Fabric {
    spec.parse::<ibfabric::topology::TopologySpec>()
        .expect("topology spec")
        .build()
        .expect("valid parameters")
}

/// To hold while a cargo build writes an artifact that another build of this process writes
/// too, until the test has copied what it needs: the plugin built with the `debug-fault`
/// feature ([`plugin::plugin_dir`]) and without it (`package`'s `.ci/package --profile dev`)
/// are both `target/<profile>/libosmlayered.so`. A test that panicked while holding it left
/// nothing half-copied that the next one reads, so a poisoned lock is taken as it is.
pub fn building_shared_artifacts() -> std::sync::MutexGuard<'static, ()> {
    static SHARED_ARTIFACTS: Mutex<()> = Mutex::new(());
    SHARED_ARTIFACTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Builds the workspace package `package` with the cargo, target dir and profile this test runs
/// under (its library or binary is not built for the root package's tests otherwise); returns
/// the profile's directory (`target/<profile>`), where the artifacts are.
pub fn build_package(package: &str) -> PathBuf {
    build_package_with_features(package, &[])
}

/// As [`build_package`], with the package's cargo `features` on.
///
/// The root package is built in the same command, so that cargo unifies the features of the
/// libraries both use as `cargo test --workspace` did (the root library with its `cli`
/// feature, which adds the command-line module only) and reuses that build: the plugin built
/// alone would compile the root library and its dependencies again without it, a minute and a
/// half of CPU in every test run.
pub fn build_package_with_features(package: &str, features: &[&str]) -> PathBuf {
    // target/<profile>/deps/<test>-HASH
    let exe = std::env::current_exe().expect("test executable");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .to_path_buf();
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .expect("utf-8 profile")
        .to_string();
    let target_dir = profile_dir.parent().expect("target dir");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "-p", "ibfabric", "-p", package])
        .args(
            features
                .iter()
                .flat_map(|f| ["--features".to_string(), format!("{package}/{f}")]),
        )
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "cargo build -p {package} failed");
    profile_dir
}

/// The fabric's switch-to-switch cables, in link order: the ones fault tests cut.
pub fn switch_cables(fabric: &ibfabric::Fabric) -> Vec<&ibfabric::topology::Link> {
    fabric
        .links()
        .iter()
        .filter(|l| fabric.node(l.a.node).is_switch() && fabric.node(l.b.node).is_switch())
        .collect()
}

/// A port as ibsim's console names it in `Unlink` and `Link` (`"name"[port]`).
pub fn console_port(fabric: &ibfabric::Fabric, port: ibfabric::topology::PortRef) -> String {
    format!("\"{}\"[{}]", fabric.node(port.node).name, port.port)
}

/// The preload library that redirects libibumad to the simulator.
pub const UMAD2SIM: &str = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

/// Clients [`Ibsim::run_each`] runs at once against one simulator: well under the number of
/// clients ibsim serves, with a subnet manager connected too.
pub const CLIENTS_AT_ONCE: usize = 4;

/// Longest a simulator may live: a safety net behind the Drop handler.
const SIMULATOR_LIFETIME_SECS: u32 = 900;

/// A running ibsim with its scratch directory.
pub struct Ibsim {
    child: Child,
    /// ibsim's standard input, its console; behind a lock so that a test may flap cables
    /// while other threads run clients.
    console: Mutex<Option<ChildStdin>>,
    socket_name: String,
    dir: tempfile::TempDir,
}

impl Ibsim {
    /// Starts ibsim on the net file text `net` and waits until it is ready.
    ///
    /// # Panics
    /// If the simulator does not come up within 60 s (its log is in the message).
    pub fn start(net: &str) -> Self {
        Self::start_for(net, SIMULATOR_LIFETIME_SECS)
    }

    /// As [`Self::start`], for a simulator that must live `lifetime_secs` (a soak).
    pub fn start_for(net: &str, lifetime_secs: u32) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let dir = tempfile::Builder::new()
            .prefix("ibfabric-sim-")
            .tempdir()
            .expect("scratch dir");
        let net_path = dir.path().join("fabric.net");
        fs::write(&net_path, net).expect("write net file");
        let socket_name = format!(
            "ibfab{}x{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let log = fs::File::create(dir.path().join("ibsim.log")).expect("ibsim log");
        let mut child = Command::new("timeout")
            .arg(lifetime_secs.to_string())
            // Raise the default limits (2048 nodes, 256 switches) for larger fabrics.
            .args(["ibsim", "-s", "-N", "8192", "-S", "2048", "-P", "131072"])
            .arg(&net_path)
            .env("IBSIM_SOCKNAME", &socket_name)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("start ibsim (is ibsim-utils installed?)");
        let console = Mutex::new(child.stdin.take());
        let mut sim = Ibsim {
            child,
            console,
            socket_name,
            dir,
        };
        sim.wait_ready();
        sim
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = fs::read_to_string(self.log_path()).unwrap_or_default();
            if log.contains("Network simulator ready.") {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "ibsim exited ({status}) before it was ready:\n{}",
                    tail(&log)
                );
            }
            assert!(
                Instant::now() < deadline,
                "ibsim not ready after 60 s:\n{}",
                tail(&log)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The simulator's own log (stdout and stderr).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("ibsim.log")
    }

    /// The scratch directory clients run in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A command for `program` that talks to this simulator.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["120", program])
            .env("IBSIM_SOCKNAME", &self.socket_name)
            .env("LD_PRELOAD", UMAD2SIM)
            .current_dir(self.dir.path());
        cmd
    }

    /// Runs `program args` against the simulator; panics with its stderr if it fails.
    pub fn run(&self, program: &str, args: &[&str]) -> String {
        let out: Output = self
            .command(program)
            .args(args)
            .output()
            .expect("run client");
        assert!(
            out.status.success(),
            "{program} {args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 output")
    }

    /// Runs `program` once per argument list of `each` against the simulator, up to
    /// [`CLIENTS_AT_ONCE`] at a time, and returns their outputs in the order of `each`; panics
    /// with the stderr of the first that fails. The diagnostic tools spend most of their time
    /// starting up and opening umad2sim rather than in ibsim, so a few at once (one `ibroute`
    /// per switch of a Slim Fly q = 7 is 98 processes) take a fraction of the time.
    pub fn run_each(&self, program: &str, each: &[Vec<String>]) -> Vec<String> {
        let mut outputs = Vec::with_capacity(each.len());
        for batch in each.chunks(CLIENTS_AT_ONCE) {
            let children: Vec<Child> = batch
                .iter()
                .map(|args| {
                    self.command(program)
                        .args(args)
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .expect("run client")
                })
                .collect();
            for (args, child) in batch.iter().zip(children) {
                let out = child.wait_with_output().expect("wait for client");
                assert!(
                    out.status.success(),
                    "{program} {args:?} failed ({}):\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
                outputs.push(String::from_utf8(out.stdout).expect("utf-8 output"));
            }
        }
        outputs
    }

    /// Sends one command to ibsim's console (e.g. `Unlink "sw0-0-0"[3]`).
    pub fn console(&self, line: &str) {
        let mut console = self.console.lock().expect("console lock");
        let stdin = console.as_mut().expect("console open");
        writeln!(stdin, "{line}").expect("write to ibsim console");
        stdin.flush().expect("flush ibsim console");
    }
}

impl Drop for Ibsim {
    fn drop(&mut self) {
        // SIGTERM to `timeout`, which passes it on to ibsim; then reap both.
        // SAFETY: kill(2) with the PID of our own child process; no memory is touched.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Longest an OpenSM may live: a safety net behind the Drop handler.
const OPENSM_LIFETIME_SECS: u32 = 600;

/// How to run OpenSM against a simulator.
#[derive(Debug, Clone)]
pub struct OpenSmOptions {
    /// Routing engine(s) for `-R` (e.g. `minhop`, `dfsssp`).
    pub engine: String,
    /// LMC (`-l`): 2^lmc LIDs per CA port.
    pub lmc: u8,
    /// Once mode (`-o`): one sweep, then OpenSM exits. Faster to come up (about 2-3 s for a
    /// Slim Fly q = 5 under ibsim, against about 12 s for the daemon's first sweep).
    pub once: bool,
    /// Text of a config file passed with `-F` (needed for `event_plugin_name`).
    pub config: Option<String>,
    /// Further command-line arguments.
    pub extra_args: Vec<String>,
    /// Further environment variables (e.g. `LD_LIBRARY_PATH` naming the directory of an event
    /// plugin, which OpenSM `dlopen`s by name).
    pub env: Vec<(String, std::ffi::OsString)>,
    /// How long the subnet may take to come up.
    pub up_within: Duration,
    /// The log line [`OpenSm::start`] waits for: [`SUBNET_UP`], or [`STANDBY`] for a daemon
    /// that should find a master of higher priority and stand by.
    pub ready: &'static str,
}

impl OpenSmOptions {
    /// `-R engine -l lmc`, once mode, no config file.
    pub fn new(engine: &str, lmc: u8) -> Self {
        Self {
            engine: engine.into(),
            lmc,
            once: true,
            config: None,
            extra_args: Vec::new(),
            env: Vec::new(),
            up_within: Duration::from_secs(120),
            ready: SUBNET_UP,
        }
    }
}

/// A subnet manager run against an [`Ibsim`]: `timeout N opensm` in the simulator's scratch
/// directory with `-D 0x43`, so that its dumps (`opensm-lfts.dump`, `opensm-subnet.lst`, ...)
/// land in [`OpenSm::dump_dir`]; its cache (guid2lid) is kept there too, so runs do not share
/// LIDs through `/var/cache/opensm`. Stopped by PID when dropped.
pub struct OpenSm {
    child: Child,
    log: PathBuf,
    dump_dir: PathBuf,
}

/// The log line OpenSM writes when the subnet is configured (`... 0x02 -> SUBNET UP`).
pub const SUBNET_UP: &str = "-> SUBNET UP";

/// The log line OpenSM writes when it stands by for a master of higher priority.
pub const STANDBY: &str = "Entering STANDBY state";

impl OpenSm {
    /// Starts OpenSM and waits until its log says `SUBNET UP` (in once mode, also until it has
    /// exited, so every table and dump is written).
    ///
    /// # Panics
    /// If OpenSM exits without bringing the subnet up, or takes longer than
    /// [`OpenSmOptions::up_within`] (its log is in the message).
    pub fn start(sim: &Ibsim, options: &OpenSmOptions) -> Self {
        Self::try_start(sim, options).unwrap_or_else(|why| panic!("{why}"))
    }

    /// As [`Self::start`], returning why the subnet did not come up instead of panicking.
    pub fn try_start(sim: &Ibsim, options: &OpenSmOptions) -> Result<Self, String> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dump_dir = sim.dir().join(format!("opensm-{n}"));
        fs::create_dir_all(&dump_dir).expect("opensm dump dir");
        let log = sim.dir().join(format!("opensm-{n}.log"));
        let mut cmd = Command::new("timeout");
        let lifetime = OPENSM_LIFETIME_SECS.max(options.up_within.as_secs() as u32 + 120);
        cmd.arg(lifetime.to_string())
            .arg("opensm")
            .arg("-f")
            .arg(&log)
            .args(["-R", &options.engine, "-l", &options.lmc.to_string()])
            .args(["-D", "0x43"])
            .env("IBSIM_SOCKNAME", &sim.socket_name)
            .env("LD_PRELOAD", UMAD2SIM)
            .env("OSM_TMP_DIR", &dump_dir)
            .env("OSM_CACHE_DIR", &dump_dir)
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .current_dir(sim.dir())
            .stdin(Stdio::null());
        if options.once {
            cmd.arg("-o");
        }
        if let Some(config) = &options.config {
            let path = sim.dir().join(format!("opensm-{n}.conf"));
            fs::write(&path, config).expect("write opensm config");
            cmd.arg("-F").arg(path);
        }
        cmd.args(&options.extra_args);
        let out = fs::File::create(sim.dir().join(format!("opensm-{n}.out"))).expect("opensm out");
        let child = cmd
            .stdout(out.try_clone().expect("out handle"))
            .stderr(out)
            .spawn()
            .expect("start opensm (is the opensm package installed?)");
        let mut sm = OpenSm {
            child,
            log,
            dump_dir,
        };
        sm.wait_subnet_up(options.ready, options.once, options.up_within)?;
        Ok(sm)
    }

    fn wait_subnet_up(&mut self, ready: &str, once: bool, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            let log = fs::read_to_string(&self.log).unwrap_or_default();
            let up = log.contains(ready);
            match self.child.try_wait() {
                Ok(Some(_)) if up => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!(
                        "opensm exited ({status}) before the subnet was up:\n{}",
                        tail(&log)
                    ));
                }
                _ if up && !once => return Ok(()),
                _ => {}
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "opensm: no \"{ready}\" in its log after {} s:\n{}",
                    within.as_secs(),
                    tail(&log)
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// OpenSM's log (`-f`).
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The log's text.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Where the `-D 0x43` dumps go (OSM_TMP_DIR).
    pub fn dump_dir(&self) -> &Path {
        &self.dump_dir
    }

    /// Path of `opensm-lfts.dump`.
    pub fn lfts_dump_path(&self) -> PathBuf {
        self.dump_dir.join("opensm-lfts.dump")
    }
}

impl Drop for OpenSm {
    /// SIGTERM (which `timeout` passes on); an OpenSM busy routing acts on it only when the
    /// engine returns, so after 10 s the daemon and its `timeout` are killed.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let daemon = self.daemon_pid();
            // SAFETY: kill(2) with the PID of our own child process; no memory is touched.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if matches!(self.child.try_wait(), Ok(None)) {
                for pid in daemon.into_iter().chain([self.child.id() as libc::pid_t]) {
                    // SAFETY: kill(2) with the PID of our child or grandchild; no memory is
                    // touched.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        let _ = self.child.wait();
    }
}

impl OpenSm {
    /// What OpenSM printed on stdout and stderr (the `.out` file next to its log).
    pub fn output(&self) -> String {
        fs::read_to_string(self.log.with_extension("out")).unwrap_or_default()
    }
}

impl OpenSm {
    /// Sends `signal` to the opensm process (the child of its `timeout`), e.g. `SIGHUP`, on
    /// which OpenSM starts a heavy sweep.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = self.daemon_pid().expect("opensm runs under timeout");
        // SAFETY: kill(2) with the PID of our own grandchild; no memory is touched.
        let status = unsafe { libc::kill(pid, signal) };
        assert_eq!(status, 0, "kill {pid}");
    }

    /// The resident set size of the opensm process in KiB (`VmRSS`), while it runs.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = fs::read_to_string(format!("/proc/{}/status", self.daemon_pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    /// The PID of the opensm process (the child of its `timeout`), while it runs.
    fn daemon_pid(&self) -> Option<libc::pid_t> {
        let timeout_pid = self.child.id();
        fs::read_to_string(format!("/proc/{timeout_pid}/task/{timeout_pid}/children"))
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }

    /// Whether the OpenSM process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}
