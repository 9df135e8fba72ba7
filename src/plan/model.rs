//! Switch models: the real boxes a site installs, from the catalogue `switch-models.yaml` next
//! to this file (compiled in; its header says what each field means).
//!
//! A construction's switch has exactly the ports its topology uses (a Slim Fly q = 5 switch is
//! an 11-port device), but sites install 36-, 40- or 64-port switches. [`SwitchLayout`] puts a
//! construction's cables on such a switch: hosts on the lowest ports, from port 1, the network
//! on the ports right after them, the rest spare (the convention of the deployed Slim Fly, and
//! it keeps the abstract device's port numbers when it has its hosts first). On switches with
//! twin-port cages the faceplate shows `cage/split`, which sheets print next to the port number.

use serde::Deserialize;

use crate::topology::LinkSpeed;

/// The built-in catalogue.
const CATALOGUE: &str = include_str!("switch-models.yaml");

/// A switch model of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchModel {
    /// What `--switch-model` takes (`msb7800`).
    pub name: String,
    /// The product line, for sheets.
    pub product: String,
    /// Model token of the NodeDescription (`MF0;<name>:MSB7800/U1`).
    pub description_model: String,
    /// Signalling rate of its ports (`EDR`).
    pub speed: String,
    /// InfiniBand ports, 1..=ports.
    pub ports: u8,
    /// IB ports behind one faceplate cage (2 on twin-port OSFP switches).
    pub ports_per_cage: u8,
}

impl SwitchModel {
    /// Every model of the built-in catalogue.
    pub fn catalogue() -> Vec<SwitchModel> {
        yaml_serde::from_str(CATALOGUE).expect("the built-in catalogue parses (tested)")
    }

    /// The catalogue model called `name` (case-insensitive).
    ///
    /// # Errors
    /// An unknown name: the message lists the known ones.
    pub fn by_name(name: &str) -> Result<SwitchModel, String> {
        let all = Self::catalogue();
        let names: Vec<String> = all.iter().map(|m| m.name.clone()).collect();
        all.into_iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown switch model {name:?}; known: {}", names.join(", ")))
    }

    /// The link speed of its ports.
    pub fn link_speed(&self) -> LinkSpeed {
        self.speed
            .parse()
            .expect("catalogue speeds are link speeds (tested)")
    }

    /// The faceplate label of `port` when it differs from the port number (`17/2` for port 34
    /// of a twin-port cage switch); `None` on one-port-per-cage switches.
    pub fn port_label(&self, port: u8) -> Option<String> {
        (self.ports_per_cage > 1 && (1..=self.ports).contains(&port)).then(|| {
            let (cage, split) = (
                (port - 1) / self.ports_per_cage + 1,
                (port - 1) % self.ports_per_cage + 1,
            );
            format!("{cage}/{split}")
        })
    }

    /// The port a faceplate label (`17/2`) or a plain port number names.
    pub fn port_from_label(&self, label: &str) -> Option<u8> {
        let port: u8 = match label.split_once('/') {
            Some((cage, split)) if self.ports_per_cage > 1 => {
                let (cage, split): (u8, u8) =
                    (cage.trim().parse().ok()?, split.trim().parse().ok()?);
                if cage == 0 || split == 0 || split > self.ports_per_cage {
                    return None;
                }
                (cage - 1)
                    .checked_mul(self.ports_per_cage)?
                    .checked_add(split)?
            }
            Some(_) => return None,
            None => label.trim().parse().ok()?,
        };
        (1..=self.ports).contains(&port).then_some(port)
    }
}

/// How a construction's switches are placed on real ones: the port count, and the catalogue
/// model when one was named (`--switch-ports N` alone gives a generic N-port switch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchLayout {
    /// Ports of every switch.
    pub ports: u8,
    /// The catalogue model, if any.
    pub model: Option<SwitchModel>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_the_three_models_with_valid_speeds() {
        let all = SwitchModel::catalogue();
        let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["msb7800", "qm8700", "qm9700"]);
        for m in &all {
            let _ = m.link_speed();
            assert_eq!(m.ports % m.ports_per_cage, 0, "{}: whole cages", m.name);
        }
        assert_eq!(SwitchModel::by_name("QM9700").unwrap().ports, 64);
        let err = SwitchModel::by_name("sx6036").unwrap_err();
        assert!(err.contains("known: msb7800, qm8700, qm9700"), "{err}");
    }

    #[test]
    fn every_port_label_reads_back_as_its_port() {
        for m in SwitchModel::catalogue() {
            for port in 1..=m.ports {
                let label = m.port_label(port);
                assert_eq!(label.is_some(), m.ports_per_cage > 1, "{} {port}", m.name);
                let text = label.unwrap_or_else(|| port.to_string());
                assert_eq!(m.port_from_label(&text), Some(port), "{} {text}", m.name);
            }
            assert_eq!(m.port_from_label("0"), None);
            assert_eq!(
                m.port_from_label(&(u16::from(m.ports) + 1).to_string()),
                None
            );
        }
        let qm9700 = SwitchModel::by_name("qm9700").unwrap();
        assert_eq!(qm9700.port_label(34).as_deref(), Some("17/2"));
        assert_eq!(qm9700.port_label(1).as_deref(), Some("1/1"));
        assert_eq!(qm9700.port_label(64).as_deref(), Some("32/2"));
        assert_eq!(qm9700.port_from_label("33/1"), None);
        assert_eq!(qm9700.port_from_label("1/3"), None);
    }
}
