#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lull_fuzz::judgement(data));
