#![no_main]
// The two files of OpenSM's cache directory share their JSON header: one input, both readers.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_harness::run_text(
    |text| {
        fuzz_harness::checked(osmlayered::fuzz::read_saved_session(text));
        fuzz_harness::checked(osmlayered::fuzz::read_saved_trees(text));
    },
    data
));
