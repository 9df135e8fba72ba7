//! Why a name names no node, or more than one: the errors name what was looked for, how, and
//! the nearest names the fabric has.

/// Why a name names no node, or more than one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Nothing matched.
    #[error("no {want} {name:?} in {fabric} (looked for {looked}){}", nearest(.candidates))]
    Missing {
        /// The name looked for.
        name: String,
        /// "host", "switch" or "node".
        want: &'static str,
        /// The fabric's name.
        fabric: String,
        /// The rules tried, in words.
        looked: String,
        /// The nearest names of the fabric, nearest first.
        candidates: Vec<String>,
    },
    /// The deciding rule matched several nodes.
    #[error("{name:?} is ambiguous in {fabric}: as {rule} it names {}", listed(.nodes))]
    Ambiguous {
        /// The name.
        name: String,
        /// The fabric's name.
        fabric: String,
        /// The rule, in words.
        rule: &'static str,
        /// The nodes it names.
        nodes: Vec<String>,
    },
    /// Only nodes of the wrong kind matched.
    #[error("{name:?} is {node} in {fabric} (by its {rule}), a {kind}, not a {want}")]
    WrongKind {
        /// The name.
        name: String,
        /// The fabric's name.
        fabric: String,
        /// The node it names.
        node: String,
        /// The rule, in words.
        rule: &'static str,
        /// "switch" or "host".
        kind: &'static str,
        /// "host", "switch".
        want: &'static str,
    },
}

impl ResolveError {
    /// The error as what a reader expected at a line
    /// ([`ParseError::expected`](crate::io::ParseError::expected)), for host lists:
    /// `a host of <fabric> (by …; nearest: …)`.
    pub fn expected(&self) -> String {
        match self {
            ResolveError::Missing {
                want,
                fabric,
                looked,
                candidates,
                ..
            } => format!("a {want} of {fabric} (by {looked}{})", nearest(candidates)),
            ResolveError::Ambiguous {
                fabric,
                rule,
                nodes,
                ..
            } => format!(
                "a name of one node of {fabric} (as {rule} it names {})",
                listed(nodes)
            ),
            ResolveError::WrongKind {
                fabric,
                node,
                kind,
                want,
                ..
            } => format!("a {want} of {fabric} ({node} is a {kind})"),
        }
    }
}

fn nearest(candidates: &[String]) -> String {
    if candidates.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = candidates.iter().map(|c| format!("{c:?}")).collect();
    format!("; nearest: {}", quoted.join(", "))
}

fn listed(nodes: &[String]) -> String {
    let quoted: Vec<String> = nodes.iter().map(|c| format!("{c:?}")).collect();
    quoted.join(" and ")
}
