//! A topology named by kind and parameters, as the command-line tools take it: the one place
//! that maps `slimfly --q 5` (or the compact `slimfly:q=5`) to a construction.

use std::fmt;
use std::str::FromStr;

use super::circulant::Circulant;
use super::fattree::FatTree;
use super::kary_ntree::KaryNTree;
use super::lsft::Lsft;
use super::mlfm::Mlfm;
use super::polarfly::PolarFly;
use super::random_regular::RandomRegular;
use super::shortcut::Shortcut;
use super::slimfly::SlimFly;
use super::{Construction, Fabric, TopologyError};

/// A construction and its parameters, before validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologySpec {
    /// Slim Fly for prime power q; p hosts per switch (default ⌈k'/2⌉).
    SlimFly {
        /// Field order.
        q: u32,
        /// Hosts per switch.
        p: Option<u32>,
    },
    /// Multi-Layer Full Mesh of 2d-port switches.
    Mlfm {
        /// Half the switch radix.
        d: u32,
    },
    /// Latin-square fat-tree from the projective plane of order n.
    Lsft {
        /// Plane order.
        n: u32,
    },
    /// PolarFly (Erdős–Rényi polarity graph) for prime power q; p hosts per router.
    PolarFly {
        /// Field order.
        q: u32,
        /// Hosts per router.
        p: Option<u32>,
    },
    /// Seeded random regular switch graph.
    Random {
        /// Switches.
        switches: u32,
        /// Network degree.
        degree: u32,
        /// Hosts per switch.
        hosts: u32,
        /// Seed.
        seed: u32,
    },
    /// Two-level fat tree.
    FatTree {
        /// Leaf switches.
        leaves: u32,
        /// Spine switches.
        spines: u32,
        /// Parallel cables between each leaf and each spine.
        links_per_pair: u32,
        /// Hosts per leaf.
        hosts_per_leaf: u32,
    },
    /// k-ary n-tree: the fat tree of n levels (three and more), k hosts per leaf.
    KaryNTree {
        /// Arity: hosts per leaf, down- and up-links per switch.
        k: u32,
        /// Levels.
        n: u32,
    },
    /// Ring-based random shortcut network.
    Shortcut {
        /// Switches on the ring.
        nodes: u32,
        /// Network degree (ring included).
        degree: u32,
        /// Hosts per switch.
        hosts: u32,
        /// Seed.
        seed: u32,
    },
    /// Circulant network C(n; jumps).
    Circulant {
        /// Switches.
        nodes: u32,
        /// Jumps (empty: 1, 2, 4, …, n/2).
        jumps: Vec<u32>,
        /// Hosts per switch.
        hosts: u32,
    },
}

impl TopologySpec {
    /// The fabric these parameters build.
    ///
    /// # Errors
    /// Impossible parameters, as [`Self::construction`].
    pub fn build(&self) -> Result<Fabric, TopologyError> {
        Ok(self.construction()?.build())
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// Impossible parameters, with the nearest valid ones where there are such.
    pub fn construction(&self) -> Result<Box<dyn Construction>, TopologyError> {
        Ok(match *self {
            TopologySpec::Shortcut {
                nodes,
                degree,
                hosts,
                seed,
            } => Box::new(Shortcut::new(nodes, degree, hosts, u64::from(seed))?),
            TopologySpec::Circulant {
                nodes,
                ref jumps,
                hosts,
            } => Box::new(Circulant::new(nodes, jumps, hosts)?),
            TopologySpec::SlimFly { q, p } => Box::new(SlimFly::new(q, p)?),
            TopologySpec::Mlfm { d } => Box::new(Mlfm::new(d)?),
            TopologySpec::Lsft { n } => Box::new(Lsft::new(n)?),
            TopologySpec::KaryNTree { k, n } => Box::new(KaryNTree::new(k, n)?),
            TopologySpec::PolarFly { q, p } => Box::new(PolarFly::new(q, p)?),
            TopologySpec::Random {
                switches,
                degree,
                hosts,
                seed,
            } => Box::new(RandomRegular::new(
                switches,
                degree,
                hosts,
                u64::from(seed),
            )?),
            TopologySpec::FatTree {
                leaves,
                spines,
                links_per_pair,
                hosts_per_leaf,
            } => Box::new(FatTree::new(
                leaves,
                spines,
                links_per_pair,
                hosts_per_leaf,
            )?),
        })
    }
}

/// Why a compact spec string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "topology spec {text:?}: {problem} (expected e.g. slimfly:q=5, slimfly:q=7,p=4, mlfm:d=3, lsft:n=3, polarfly:q=7, fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18, kary-ntree:k=4,n=3, random:switches=32,degree=5,hosts=2,seed=1, shortcut:nodes=64,degree=6,seed=1, circulant:nodes=16,jumps=1,2,4,8)"
)]
pub struct SpecError {
    text: String,
    problem: String,
}

/// A parameter's value, or why it is none: not a number, or too large for one (a 20-digit q is
/// a number, just not one any construction takes).
fn parse_whole_number(value: &str) -> Result<u32, String> {
    value
        .parse()
        .map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow => {
                format!("{value} is too large (at most {})", u32::MAX)
            }
            _ => format!("{value:?} is not a whole number"),
        })
}

impl FromStr for TopologySpec {
    type Err = SpecError;

    /// Reads `kind:key=value,key=value` with the keys of the command-line options.
    fn from_str(text: &str) -> Result<Self, SpecError> {
        let fail = |problem: String| SpecError {
            text: text.into(),
            problem,
        };
        let (kind, params) = text.split_once(':').unwrap_or((text, ""));
        let mut values: Vec<(&str, u32)> = Vec::new();
        for pair in params.split(',').filter(|p| !p.is_empty()) {
            // A bare number continues a list (`jumps=1,2,4`).
            let continues_list = values.last().is_some_and(|&(k, _)| k == "jumps");
            let (key, value) = match pair.split_once('=') {
                Some(kv) => kv,
                None if continues_list => ("jumps", pair),
                None => return Err(fail(format!("{pair:?} is not key=value"))),
            };
            let value = parse_whole_number(value).map_err(|why| fail(format!("{key} = {why}")))?;
            if key != "jumps"
                && let Some(&(_, first)) = values.iter().find(|&&(k, _)| k == key)
            {
                return Err(fail(format!(
                    "{key} is given twice ({key}={first} and {key}={value}); give it once"
                )));
            }
            values.push((key, value));
        }
        let allowed: &[&str] = match kind {
            "slimfly" | "polarfly" => &["q", "p"],
            "mlfm" => &["d"],
            "lsft" => &["n"],
            "kary-ntree" => &["k", "n"],
            "fattree" => &["leaves", "spines", "links-per-pair", "hosts-per-leaf"],
            "random" => &["switches", "degree", "hosts", "seed"],
            "shortcut" => &["nodes", "degree", "hosts", "seed"],
            "circulant" => &["nodes", "jumps", "hosts"],
            other => return Err(fail(format!("unknown kind {other:?}"))),
        };
        if let Some((key, _)) = values.iter().find(|(k, _)| !allowed.contains(k)) {
            return Err(fail(format!(
                "{kind} takes {}, not {key}",
                allowed.join(", ")
            )));
        }
        let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v);
        let need = |key: &str| get(key).ok_or_else(|| fail(format!("{kind} needs {key}=")));
        Ok(match kind {
            "slimfly" => TopologySpec::SlimFly {
                q: need("q")?,
                p: get("p"),
            },
            "polarfly" => TopologySpec::PolarFly {
                q: need("q")?,
                p: get("p"),
            },
            "mlfm" => TopologySpec::Mlfm { d: need("d")? },
            "lsft" => TopologySpec::Lsft { n: need("n")? },
            "kary-ntree" => TopologySpec::KaryNTree {
                k: need("k")?,
                n: need("n")?,
            },
            "random" => TopologySpec::Random {
                switches: need("switches")?,
                degree: need("degree")?,
                hosts: get("hosts").unwrap_or(1),
                seed: get("seed").unwrap_or(0),
            },
            "shortcut" => TopologySpec::Shortcut {
                nodes: need("nodes")?,
                degree: need("degree")?,
                hosts: get("hosts").unwrap_or(1),
                seed: get("seed").unwrap_or(0),
            },
            "circulant" => TopologySpec::Circulant {
                nodes: need("nodes")?,
                jumps: values
                    .iter()
                    .filter(|(k, _)| *k == "jumps")
                    .map(|&(_, v)| v)
                    .collect(),
                hosts: get("hosts").unwrap_or(1),
            },
            _ => TopologySpec::FatTree {
                leaves: need("leaves")?,
                spines: need("spines")?,
                links_per_pair: need("links-per-pair")?,
                hosts_per_leaf: need("hosts-per-leaf")?,
            },
        })
    }
}

impl fmt::Display for TopologySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologySpec::SlimFly { q, p: None } => write!(f, "slimfly:q={q}"),
            TopologySpec::SlimFly { q, p: Some(p) } => write!(f, "slimfly:q={q},p={p}"),
            TopologySpec::PolarFly { q, p: None } => write!(f, "polarfly:q={q}"),
            TopologySpec::PolarFly { q, p: Some(p) } => write!(f, "polarfly:q={q},p={p}"),
            TopologySpec::Mlfm { d } => write!(f, "mlfm:d={d}"),
            TopologySpec::Lsft { n } => write!(f, "lsft:n={n}"),
            TopologySpec::KaryNTree { k, n } => write!(f, "kary-ntree:k={k},n={n}"),
            TopologySpec::Random {
                switches,
                degree,
                hosts,
                seed,
            } => {
                write!(
                    f,
                    "random:switches={switches},degree={degree},hosts={hosts},seed={seed}"
                )
            }
            TopologySpec::FatTree {
                leaves,
                spines,
                links_per_pair,
                hosts_per_leaf,
            } => write!(
                f,
                "fattree:leaves={leaves},spines={spines},links-per-pair={links_per_pair},hosts-per-leaf={hosts_per_leaf}"
            ),
            TopologySpec::Shortcut {
                nodes,
                degree,
                hosts,
                seed,
            } => write!(
                f,
                "shortcut:nodes={nodes},degree={degree},hosts={hosts},seed={seed}"
            ),
            TopologySpec::Circulant {
                nodes,
                jumps,
                hosts,
            } => {
                write!(f, "circulant:nodes={nodes}")?;
                if !jumps.is_empty() {
                    let jumps: Vec<String> = jumps.iter().map(u32::to_string).collect();
                    write!(f, ",jumps={}", jumps.join(","))?;
                }
                write!(f, ",hosts={hosts}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_specs_round_trip_and_build() {
        for text in [
            "slimfly:q=5",
            "slimfly:q=7,p=3",
            "mlfm:d=3",
            "lsft:n=3",
            "polarfly:q=5",
            "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4",
            "kary-ntree:k=3,n=3",
            "shortcut:nodes=64,degree=6,hosts=1,seed=3",
            "circulant:nodes=16,jumps=1,3,hosts=2",
            "circulant:nodes=16,hosts=1",
        ] {
            let spec: TopologySpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
            let fabric = spec.build().unwrap();
            assert!(fabric.summary().switches > 0, "{text}");
        }
    }

    #[test]
    fn bad_specs_say_what_is_expected() {
        let err = |t: &str| t.parse::<TopologySpec>().unwrap_err().to_string();
        assert!(err("dragonfly:a=1").contains("unknown kind \"dragonfly\""));
        assert!(err("slimfly:d=3").contains("slimfly takes q, p, not d"));
        assert!(err("slimfly").contains("slimfly needs q="));
        assert!(err("mlfm:d=x").contains("d = \"x\" is not a whole number"));
        assert!(err("mlfm:d=4294967296").contains("d = 4294967296 is too large"));
        assert!(err("slimfly:q=5,q=7").contains("q is given twice (q=5 and q=7)"));
        assert!(err("fattree:leaves=2,spines=2,leaves=3").contains("leaves is given twice"));
        assert!(err("shortcut:nodes=8,2").contains("\"2\" is not key=value"));
        assert!(err("circulant:jumps=1,2").contains("circulant needs nodes="));
    }
}
