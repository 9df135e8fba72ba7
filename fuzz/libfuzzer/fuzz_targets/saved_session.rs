#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_harness::run_text(
    |text| fuzz_harness::checked(osmlayered::fuzz::read_saved_session(text)),
    data
));
