//! The SA requests the tool sends: a subnet administration MAD carrying one MCMemberRecord
//! (IBA 15.2.5.17), encoded and decoded byte for byte, with no IO.

use std::net::Ipv6Addr;

/// Size of a MAD on the wire.
pub const MAD_SIZE: usize = 256;
/// Subnet administration management class.
const SA_CLASS: u8 = 0x03;
const SA_CLASS_VERSION: u8 = 2;
/// The attribute the requests carry.
const MC_MEMBER_RECORD: u16 = 0x0038;
/// Where the SA header's component mask and the record sit in the MAD.
const COMPONENT_MASK_AT: usize = 48;
const RECORD_AT: usize = 56;
/// The link-local subnet prefix of a port GID.
const LINK_LOCAL_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// Component mask bits of an MCMemberRecord (IBA table 213, in record order).
mod component {
    pub const MGID: u64 = 1 << 0;
    pub const PORT_GID: u64 = 1 << 1;
    pub const QKEY: u64 = 1 << 2;
    pub const MTU_SELECTOR: u64 = 1 << 4;
    pub const MTU: u64 = 1 << 5;
    pub const TCLASS: u64 = 1 << 6;
    pub const PKEY: u64 = 1 << 7;
    pub const RATE_SELECTOR: u64 = 1 << 8;
    pub const RATE: u64 = 1 << 9;
    pub const SL: u64 = 1 << 12;
    pub const FLOW_LABEL: u64 = 1 << 13;
    pub const JOIN_STATE: u64 = 1 << 16;
}

/// What a request asks of the SA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// SubnAdmSet: join (and create the group if it does not exist and the request carries
    /// what creating needs).
    Join,
    /// SubnAdmDelete: leave.
    Leave,
    /// SubnAdmGet: is the port a member? (ERR_NO_RECORDS when it is not.)
    Query,
}

impl Method {
    fn code(self) -> u8 {
        match self {
            Method::Join => 0x02,
            Method::Leave => 0x15,
            Method::Query => 0x01,
        }
    }
}

/// The group parameters a creating join must give (OpenSM refuses to create a group without
/// Q_Key, P_Key, TClass, FlowLabel and SL); MTU and rate are optional ("exactly" selectors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupParameters {
    pub qkey: u32,
    pub pkey: u16,
    pub sl: u8,
    pub tclass: u8,
    pub flow_label: u32,
    /// IBA MTU code (1 = 256 ... 5 = 4096).
    pub mtu: Option<u8>,
    /// IBA rate code (e.g. 3 = 10 Gb/s, 7 = 40 Gb/s).
    pub rate: Option<u8>,
}

/// One request: `port_guid` joins or leaves the group `mgid` as a full member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    pub tid: u64,
    pub mgid: Ipv6Addr,
    pub port_guid: u64,
    /// Given only to create a group that may not exist yet.
    pub create: Option<GroupParameters>,
}

/// "Exactly this value" for the MTU and rate selectors.
const SELECTOR_EXACTLY: u8 = 2;
/// JoinState FullMember.
const FULL_MEMBER: u8 = 1;

impl Request {
    /// The MAD as it goes on the wire (big-endian fields).
    pub fn encode(&self) -> [u8; MAD_SIZE] {
        let mut mad = [0u8; MAD_SIZE];
        mad[0] = 1; // base version
        mad[1] = SA_CLASS;
        mad[2] = SA_CLASS_VERSION;
        mad[3] = self.method.code();
        mad[8..16].copy_from_slice(&self.tid.to_be_bytes());
        mad[16..18].copy_from_slice(&MC_MEMBER_RECORD.to_be_bytes());

        let mut mask = component::MGID | component::PORT_GID;
        if self.method != Method::Query {
            mask |= component::JOIN_STATE;
        }
        let record = &mut mad[RECORD_AT..RECORD_AT + 52];
        record[0..16].copy_from_slice(&self.mgid.octets());
        record[16..24].copy_from_slice(&LINK_LOCAL_PREFIX.to_be_bytes());
        record[24..32].copy_from_slice(&self.port_guid.to_be_bytes());
        // Scope from the MGID (its fourth nibble), join state full member.
        let scope = self.mgid.octets()[1] & 0x0f;
        record[48] = (scope << 4) | FULL_MEMBER;
        if let Some(group) = &self.create {
            mask |= component::QKEY
                | component::TCLASS
                | component::PKEY
                | component::SL
                | component::FLOW_LABEL;
            record[32..36].copy_from_slice(&group.qkey.to_be_bytes());
            record[39] = group.tclass;
            record[40..42].copy_from_slice(&group.pkey.to_be_bytes());
            let sl_flow_hop =
                (u32::from(group.sl & 0x0f) << 28) | ((group.flow_label & 0xf_ffff) << 8);
            record[44..48].copy_from_slice(&sl_flow_hop.to_be_bytes());
            if let Some(mtu) = group.mtu {
                mask |= component::MTU_SELECTOR | component::MTU;
                record[38] = (SELECTOR_EXACTLY << 6) | (mtu & 0x3f);
            }
            if let Some(rate) = group.rate {
                mask |= component::RATE_SELECTOR | component::RATE;
                record[42] = (SELECTOR_EXACTLY << 6) | (rate & 0x3f);
            }
        }
        mad[COMPONENT_MASK_AT..COMPONENT_MASK_AT + 8].copy_from_slice(&mask.to_be_bytes());
        mad
    }
}

/// What the SA answered to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub tid: u64,
    /// The MAD status; 0 is success.
    pub status: u16,
    /// The group's multicast LID.
    pub mlid: u16,
    /// The group's SL.
    pub sl: u8,
    pub mgid: Ipv6Addr,
}

/// Why a received MAD is not an answer to an MCMemberRecord request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    TooShort(usize),
    NotSa { class: u8, attribute: u16 },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::TooShort(n) => write!(f, "a MAD of {n} bytes (expected {MAD_SIZE})"),
            DecodeError::NotSa { class, attribute } => write!(
                f,
                "class 0x{class:02x} attribute 0x{attribute:04x} (expected an SA MCMemberRecord)"
            ),
        }
    }
}

impl Response {
    /// Reads the answer out of a received MAD.
    pub fn decode(mad: &[u8]) -> Result<Self, DecodeError> {
        if mad.len() < RECORD_AT + 52 {
            return Err(DecodeError::TooShort(mad.len()));
        }
        let attribute = u16::from_be_bytes([mad[16], mad[17]]);
        if mad[1] != SA_CLASS || attribute != MC_MEMBER_RECORD {
            return Err(DecodeError::NotSa {
                class: mad[1],
                attribute,
            });
        }
        let record = &mad[RECORD_AT..RECORD_AT + 52];
        let mut mgid = [0u8; 16];
        mgid.copy_from_slice(&record[0..16]);
        Ok(Response {
            tid: u64::from_be_bytes(mad[8..16].try_into().expect("8 bytes")),
            status: u16::from_be_bytes([mad[4], mad[5]]),
            mlid: u16::from_be_bytes([record[36], record[37]]),
            sl: record[44] >> 4,
            mgid: Ipv6Addr::from(mgid),
        })
    }
}

/// The SA status of "no such record": a queried port is not a member.
pub const NO_RECORDS: u16 = 0x0300;

/// The SA's status codes (IBA table 190), in words for the error message.
pub fn status_text(status: u16) -> &'static str {
    match status >> 8 {
        0 if status == 0 => "success",
        0 => "MAD status error (bad version, method or attribute)",
        1 => "ERR_NO_RESOURCES",
        2 => {
            "ERR_REQ_INVALID (the SA refused the request: unknown port, bad components or partition)"
        }
        3 => "ERR_NO_RECORDS",
        4 => "ERR_TOO_MANY_RECORDS",
        5 => "ERR_REQ_INVALID_GID",
        6 => "ERR_REQ_INSUFFICIENT_COMPONENTS (creating a group needs --create)",
        _ => "unknown SA status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipoib_broadcast() -> Ipv6Addr {
        "ff12:401b:ffff::ffff:ffff".parse().unwrap()
    }

    #[test]
    fn a_join_names_the_group_the_port_and_full_membership() {
        let mad = Request {
            method: Method::Join,
            tid: 0x1234,
            mgid: ipoib_broadcast(),
            port_guid: 0x0002_c903_0000_0001,
            create: None,
        }
        .encode();
        assert_eq!(&mad[0..4], &[1, 0x03, 2, 0x02]);
        assert_eq!(u16::from_be_bytes([mad[16], mad[17]]), 0x0038);
        let mask = u64::from_be_bytes(mad[48..56].try_into().unwrap());
        assert_eq!(
            mask,
            component::MGID | component::PORT_GID | component::JOIN_STATE
        );
        assert_eq!(&mad[56..72], &ipoib_broadcast().octets());
        assert_eq!(&mad[72..80], &LINK_LOCAL_PREFIX.to_be_bytes());
        assert_eq!(&mad[80..88], &0x0002_c903_0000_0001u64.to_be_bytes());
        assert_eq!(mad[56 + 48], 0x21, "link-local scope, full member");
    }

    #[test]
    fn a_creating_join_carries_every_component_opensm_requires() {
        let mad = Request {
            method: Method::Join,
            tid: 1,
            mgid: "ff12:601b:ffff::1:2".parse().unwrap(),
            port_guid: 7,
            create: Some(GroupParameters {
                qkey: 0xb,
                pkey: 0xffff,
                sl: 3,
                tclass: 0,
                flow_label: 0x12345,
                mtu: Some(4),
                rate: None,
            }),
        }
        .encode();
        let mask = u64::from_be_bytes(mad[48..56].try_into().unwrap());
        for bit in [0, 1, 2, 4, 5, 6, 7, 12, 13, 16] {
            assert_ne!(mask & (1 << bit), 0, "component bit {bit}");
        }
        assert_eq!(mask & (component::RATE | component::RATE_SELECTOR), 0);
        let record = &mad[56..108];
        assert_eq!(u32::from_be_bytes(record[32..36].try_into().unwrap()), 0xb);
        assert_eq!(u16::from_be_bytes([record[40], record[41]]), 0xffff);
        assert_eq!(record[44] >> 4, 3);
        let flow = (u32::from_be_bytes(record[44..48].try_into().unwrap()) >> 8) & 0xf_ffff;
        assert_eq!(flow, 0x12345);
        assert_eq!(record[38], 0x84);
    }

    #[test]
    fn a_query_asks_for_the_port_s_record_whatever_its_join_state() {
        let mad = Request {
            method: Method::Query,
            tid: 1,
            mgid: ipoib_broadcast(),
            port_guid: 7,
            create: None,
        }
        .encode();
        assert_eq!(mad[3], 0x01);
        let mask = u64::from_be_bytes(mad[48..56].try_into().unwrap());
        assert_eq!(mask, component::MGID | component::PORT_GID);
    }

    #[test]
    fn a_leave_is_a_delete() {
        let mad = Request {
            method: Method::Leave,
            tid: 1,
            mgid: ipoib_broadcast(),
            port_guid: 7,
            create: None,
        }
        .encode();
        assert_eq!(mad[3], 0x15);
    }

    #[test]
    fn a_response_gives_back_mlid_sl_and_status() {
        let mut mad = Request {
            method: Method::Join,
            tid: 99,
            mgid: ipoib_broadcast(),
            port_guid: 7,
            create: None,
        }
        .encode();
        mad[3] = 0x81;
        mad[56 + 36..56 + 38].copy_from_slice(&0xc001u16.to_be_bytes());
        mad[56 + 44] = 0x50;
        let response = Response::decode(&mad).unwrap();
        assert_eq!(response.tid, 99);
        assert_eq!(response.status, 0);
        assert_eq!(response.mlid, 0xc001);
        assert_eq!(response.sl, 5);
        assert_eq!(response.mgid, ipoib_broadcast());
        mad[4..6].copy_from_slice(&0x0200u16.to_be_bytes());
        assert_eq!(Response::decode(&mad).unwrap().status, 0x0200);
    }

    #[test]
    fn a_short_or_foreign_mad_is_refused() {
        assert_eq!(Response::decode(&[0; 40]), Err(DecodeError::TooShort(40)));
        let mut mad = [0u8; MAD_SIZE];
        mad[1] = 0x81;
        assert!(matches!(
            Response::decode(&mad),
            Err(DecodeError::NotSa { .. })
        ));
    }

    #[test]
    fn status_words_name_the_sa_errors() {
        assert_eq!(status_text(0), "success");
        assert!(status_text(0x0200).starts_with("ERR_REQ_INVALID"));
        assert!(status_text(0x0600).contains("--create"));
    }
}
