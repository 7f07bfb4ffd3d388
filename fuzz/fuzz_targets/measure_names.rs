//! Measure names in both syntaxes (`P@10`, `AP@100`; trec_eval's `P.5,10`, `map_cut_100`) and
//! trec_eval's `-m` arguments: parsed or refused with a message, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lemma_accum::Measure::parse(text);
    let args: Vec<&str> = text.split(' ').collect();
    let _ = lemma_accum::Measure::parse_all(args.iter().copied());
    let _ = lemma_accum::trec::resolve(&args);
});
