//! The SL-to-VL rows as OpenSM's C type packs them. The answers themselves (path SLs and
//! SL-to-VL rows of the routing in force) are the core's `ibfabric::session::QosAnswers`.

use ibfabric::deadlock::SlVlRow;

/// A row as `ib_slvl_table_t` holds it: two SLs per byte, the even SL in the high nibble
/// (iba/ib_types.h: ib_slvl_table_get).
pub fn packed(row: &SlVlRow) -> [u8; 8] {
    std::array::from_fn(|i| (row[2 * i] << 4) | (row[2 * i + 1] & 0x0F))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pack_even_sls_high() {
        let row: SlVlRow = std::array::from_fn(|sl| (sl as u8) % 8);
        assert_eq!(
            packed(&row),
            [0x01, 0x23, 0x45, 0x67, 0x01, 0x23, 0x45, 0x67]
        );
        let mut row = [0u8; 16];
        row[1] = 15;
        row[14] = 3;
        assert_eq!(packed(&row), [0x0F, 0, 0, 0, 0, 0, 0, 0x30]);
    }
}
