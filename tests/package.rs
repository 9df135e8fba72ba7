//! The Debian package, end to end on this machine (as root): `bash .ci/package` builds it,
//! `dpkg -i` installs it, `man` finds the pages, the completions are in place, stock OpenSM
//! under ibsim loads the INSTALLED plugin with the two opensm.conf lines the README gives, and
//! `dpkg -r` removes it all but the conffile an admin may have edited.
//!
//! Part of the normal run (as root, like the rest of the set-up): the test packages the `dev`
//! build (`bash .ci/package --profile dev`, the binaries the rest of the suite runs: a release
//! build would compile everything a second time, minutes on 2 cores, for a package whose layout
//! is the same), installs it into the system and purges it at the end.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::plugin::LAYERED_USED;
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::io::ibsim;
use ibfabric::topology::TopologySpec;

const CONFFILE: &str = "/etc/opensm/layered.yaml";

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

fn succeeds(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn installed() -> bool {
    run("dpkg-query", &["-W", "-f=${Status}", "ibfabric"])
        .stdout
        .starts_with(b"install ok installed")
}

/// Puts back what the test changed in the system, whatever happens: the package purged and
/// an admin's own layered.yaml restored.
struct Restore {
    conffile_backup: Option<Vec<u8>>,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = run("dpkg", &["--purge", "ibfabric"]);
        if let Some(old) = &self.conffile_backup {
            let _ = std::fs::write(CONFFILE, old);
        }
    }
}

fn package_file() -> PathBuf {
    {
        // The package's plugin (no `debug-fault`) and the other tests' share the file.
        let _building = common::building_shared_artifacts();
        succeeds("bash", &[".ci/package", "--profile", "dev"]);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debian");
    let version = env!("CARGO_PKG_VERSION");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("ibfabric_{version}-")) && name.ends_with(".deb")
        })
        .expect("a .deb in target/debian")
}

#[test]
fn the_package_installs_works_and_removes_keeping_the_conffile() {
    assert_eq!(succeeds("id", &["-u"]).trim(), "0", "dpkg -i needs root");
    assert!(
        !installed(),
        "ibfabric is installed already: remove it first"
    );
    let deb = package_file();
    let _restore = Restore {
        conffile_backup: std::fs::read(CONFFILE).ok(),
    };
    let _ = std::fs::remove_file(CONFFILE);

    succeeds("dpkg", &["-i", deb.to_str().unwrap()]);
    assert!(installed());

    // The tools, their man pages and completions.
    let version = succeeds("/usr/bin/ibfabric", &["--version"]);
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
    for page in ["ibfabric", "ibfabric-route", "cabling", "cabling-plan"] {
        let path = succeeds("man", &["-w", page]);
        assert!(
            path.trim().starts_with("/usr/share/man/man1/"),
            "{page}: {path}"
        );
    }
    for (file, command) in [
        (
            "/usr/share/bash-completion/completions/ibfabric",
            "ibfabric",
        ),
        ("/usr/share/bash-completion/completions/cabling", "cabling"),
        ("/usr/share/zsh/vendor-completions/_ibfabric", "ibfabric"),
        (
            "/usr/share/fish/vendor_completions.d/cabling.fish",
            "cabling",
        ),
    ] {
        let script = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(script.contains(command), "{file}");
    }
    assert!(
        std::fs::read_to_string(CONFFILE)
            .unwrap()
            .contains("# deadlock: auto")
    );
    let conffiles = succeeds("dpkg-query", &["-W", "-f=${Conffiles}", "ibfabric"]);
    assert!(conffiles.contains(CONFFILE), "{conffiles}");

    // The plugin, in the multiarch directory and the ld.so cache, loaded by OpenSM with no
    // LD_LIBRARY_PATH: the installed copy.
    let multiarch = succeeds("gcc", &["-print-multiarch"]);
    let library = format!("/usr/lib/{}/libosmlayered.so", multiarch.trim());
    assert!(Path::new(&library).exists(), "{library}");
    // (The cache may name it by /lib/..., the same directory on a merged-/usr system.)
    let cache = succeeds("ldconfig", &["-p"]);
    assert!(
        cache.contains("libosmlayered.so ("),
        "not in the ld.so cache:\n{cache}"
    );
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&spec.build().unwrap()));
    let sm = OpenSm::start(
        &sim,
        &OpenSmOptions {
            config: Some(format!(
                "event_plugin_name osmlayered\nevent_plugin_options {CONFFILE}\n\
                 routing_engine layered,minhop\nlmc 2\nforce_log_flush TRUE\n"
            )),
            ..OpenSmOptions::new("layered,minhop", 2)
        },
    );
    let log = sm.log();
    let loaded = format!(
        "layered: osmlayered {} loaded in OpenSM ",
        env!("CARGO_PKG_VERSION")
    );
    assert!(log.contains(&loaded), "{log}");
    assert!(
        log.contains(&format!("; configuration: {CONFFILE}")),
        "{log}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
    drop(sm);
    drop(sim);

    // An admin's edit, then removal: everything goes but the edited conffile.
    let edited = format!("{}layers: 2\n", std::fs::read_to_string(CONFFILE).unwrap());
    std::fs::write(CONFFILE, &edited).unwrap();
    succeeds("dpkg", &["-r", "ibfabric"]);
    assert!(!installed());
    for gone in ["/usr/bin/ibfabric", "/usr/bin/cabling", library.as_str()] {
        assert!(!Path::new(gone).exists(), "{gone} left after dpkg -r");
    }
    assert!(!run("man", &["-w", "ibfabric"]).status.success());
    assert_eq!(std::fs::read_to_string(CONFFILE).unwrap(), edited);
}
