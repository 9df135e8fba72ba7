//! Sizes of constructions and the refusal of impossible parameters.

use std::fmt;

/// What a construction needs and provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints (host ports).
    pub endpoints: usize,
    /// Ports each switch must have (the largest over all switches).
    pub ports_per_switch: usize,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} switches, {} endpoints, {} ports per switch",
            self.switches, self.endpoints, self.ports_per_switch
        )
    }
}

/// Why a construction cannot be built with the given parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{construction}: {problem}{}", suggestions_text(.suggestions))]
pub struct TopologyError {
    /// The construction (`slimfly`, `mlfm`, ...).
    pub construction: &'static str,
    /// What is wrong, in words.
    pub problem: String,
    /// The nearest valid parameter settings with what each needs, e.g. `("q = 5", size)`.
    pub suggestions: Vec<(String, Size)>,
}

fn suggestions_text(suggestions: &[(String, Size)]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    let list: Vec<String> = suggestions
        .iter()
        .map(|(p, size)| format!("{p} ({size})"))
        .collect();
    format!("; nearest valid: {}", list.join(", "))
}

impl TopologyError {
    /// A refusal of a scalar parameter `name = value`, suggesting the nearest valid values below
    /// and above (within `lower..=upper`) with their sizes.
    pub fn scalar(
        construction: &'static str,
        name: &str,
        value: u32,
        problem: String,
        (lower, upper): (u32, u32),
        size_if_valid: impl Fn(u32) -> Option<Size>,
    ) -> Self {
        let below = (lower..value.min(upper + 1))
            .rev()
            .find_map(|v| size_if_valid(v).map(|s| (v, s)));
        let above = (value.saturating_add(1).max(lower)..=upper)
            .find_map(|v| size_if_valid(v).map(|s| (v, s)));
        let suggestions = below
            .into_iter()
            .chain(above)
            .map(|(v, s)| (format!("{name} = {v}"), s))
            .collect();
        Self {
            construction,
            problem,
            suggestions,
        }
    }

    /// A refusal without suggestions.
    pub fn plain(construction: &'static str, problem: String) -> Self {
        Self {
            construction,
            problem,
            suggestions: Vec::new(),
        }
    }
}
