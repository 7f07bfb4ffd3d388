//! trec_eval's preference files (`-R prefs`, `-R qrels_prefs`) end to end: a judgments file and a
//! run (split at the first NUL byte) under options from the first byte (format, version, `-c`,
//! `-M`) evaluate for every preference measure without a panic, to a result or an error; a
//! result's counts are whole numbers, the fulfilled ones no more than the possible ones, every
//! other value in [0, 1], and the summary's counts the sums of the goals'.
#![no_main]
use lemma_eval::trec::{evaluate_prefs, RelFormat, TrecOptions, TrecVersion};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opts, rest)) = data.split_first() else {
        return;
    };
    let cut = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (judgments, run) = (&rest[..cut], rest.get(cut + 1..).unwrap_or(&[]));
    let dir = tempfile::tempdir().unwrap();
    let (j, r) = (dir.path().join("j"), dir.path().join("r"));
    std::fs::write(&j, judgments).unwrap();
    std::fs::write(&r, run).unwrap();
    let mut o = TrecOptions::default();
    o.measures = vec!["all_prefs".into()];
    o.rel_format = [RelFormat::Prefs, RelFormat::QrelsPrefs][usize::from(opts & 1)];
    o.version = [TrecVersion::V10, TrecVersion::V9][usize::from(opts >> 1 & 1)];
    o.complete = opts & 4 != 0;
    o.max_docs = (opts & 8 != 0).then_some(u64::from(opts >> 4));
    o.per_query = true;
    let mut sums = [0.0f64; 3];
    let done = evaluate_prefs(&j, &r, &o, &mut |_goal, _empty, v: &[f64]| {
        // all_prefs: poss, ful, ful_ret, then the ratios.
        assert_eq!(v.len(), 14);
        for c in &v[..3] {
            assert!(*c >= 0.0 && c.fract() == 0.0, "{v:?}");
        }
        assert!(v[1] <= v[0] && v[2] <= v[1], "{v:?}");
        for x in &v[3..] {
            assert!((0.0..=1.0).contains(x), "{v:?}");
        }
        for (s, c) in sums.iter_mut().zip(v) {
            *s += c;
        }
        Ok(())
    });
    if let Ok(done) = done {
        assert_eq!(&done.summary[..3], &sums[..]);
        for x in &done.summary[3..] {
            assert!((0.0..=1.0).contains(x), "{:?}", done.summary);
        }
    }
});
