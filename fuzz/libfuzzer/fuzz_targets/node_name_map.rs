#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_harness::run("node_name_map", data));
