//! `trec_eval`'s flags `-J`, `-N`, `-R`, its `relstring` text and its nicknames, on one goal
//! worked by hand: grades a 2, b 0, c -1, d 1 (R = 2); the run ranks x (not in the qrels), a, c,
//! b, d.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = (dir.path().join("qrels"), dir.path().join("run"));
    std::fs::write(&q, "g1 0 a 2\ng1 0 b 0\ng1 0 c -1\ng1 0 d 1\n").unwrap();
    let lines: String = ["x", "a", "c", "b", "d"]
        .iter()
        .enumerate()
        .map(|(i, l)| format!("g1 Q0 {l} {} {} run\n", i + 1, 0.9 - i as f64 / 10.0))
        .collect();
    std::fs::write(&r, lines).unwrap();
    let mut all = vec!["trec_eval"];
    all.extend_from_slice(args);
    let (q, r) = (
        q.to_str().unwrap().to_string(),
        r.to_str().unwrap().to_string(),
    );
    all.push(&q);
    all.push(&r);
    Command::new(env!("CARGO_BIN_EXE_lemma-eval"))
        .args(&all)
        .output()
        .unwrap()
}

fn out(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn judged_only_drops_the_unjudged_before_ranking() {
    // Without -J: a at 2, d at 5: AP = (1/2 + 2/5) / 2. With -J: a, b, d: (1/1 + 2/3) / 2.
    assert_eq!(
        out(&["-m", "map", "-m", "num_ret"]),
        "num_ret               \tall\t5\nmap                   \tall\t0.4500\n"
    );
    assert_eq!(
        out(&["-J", "-m", "map", "-m", "num_ret"]),
        "num_ret               \tall\t3\nmap                   \tall\t0.8333\n"
    );
}

#[test]
fn collection_size_feeds_utility() {
    // d (N + s - n - R) with N = 10, s = 2, n = 5, R = 2: 5.
    let o = out(&["-N", "10", "-m", "utility.0,0,0,1"]);
    assert_eq!(o, "utility_0,0,0,1       \tall\t5.0000\n");
    let o = out(&["-m", "utility.0,0,0,1"]);
    assert_eq!(o, "utility_0,0,0,1       \tall\t-5.0000\n");
}

#[test]
fn relstring_and_the_new_measures() {
    // relstring: - (x), 2 (a), . (c, negative), 0 (b), 1 (d); per goal only.
    let o = out(&["-q", "-m", "relstring", "-m", "binG", "-m", "unj.5"]);
    // binG: a has 1 non-relevant item above, d 3: (1/log2 3 + 1/log2 5) / 2 = 0.5308.
    // unj_5: x and c of 5.
    assert_eq!(
        o,
        "relstring             \tg1\t'-2.01'\n\
         binG                  \tg1\t0.5308\n\
         unj_5                 \tg1\t0.4000\n\
         binG                  \tall\t0.5308\n\
         unj_5                 \tall\t0.4000\n"
    );
    let o = out(&["-q", "-m", "relstring.3"]);
    assert_eq!(o, "relstring_3           \tg1\t'-2.'\n");
}

#[test]
fn all_trec_follows_the_version() {
    let names = |o: String| -> Vec<String> {
        o.lines()
            .map(|l| l.split('\t').next().unwrap().trim().to_string())
            .collect()
    };
    let ten = names(out(&["-m", "all_trec"]));
    let nine = names(out(&["--trec-version", "9", "-m", "all_trec"]));
    for n in ["unj_5", "rbp", "rbp_resid"] {
        assert!(
            ten.contains(&n.to_string()) && !nine.contains(&n.to_string()),
            "{n}"
        );
    }
    for n in [
        "infAP",
        "Rprec_mult_0.20",
        "binG",
        "G",
        "ndcg_rel",
        "Rndcg",
        "gm_bpref",
    ] {
        assert!(
            ten.contains(&n.to_string()) && nine.contains(&n.to_string()),
            "{n}"
        );
    }
    assert!(!ten.contains(&"yaap".to_string()) && !ten.contains(&"dcg".to_string()));
    // The lines trec_eval 10.0 prints for `-m all_trec` (checked with its binary).
    assert_eq!(ten.len(), 99);
}

#[test]
fn unsupported_inputs_are_named() {
    for (args, code, what) in [
        // The qrels read as preference judgments, which have five fields.
        (
            &["-R", "prefs"][..],
            2,
            "expected 5 fields (goal group subgroup lemma level)",
        ),
        (&["-Z", "no-such-z.txt"][..], 2, "no-such-z.txt"),
        (&["--trec-version", "9", "-m", "rbp"][..], 1, "`rbp`"),
        (
            &["-m", "prefs"][..],
            4,
            "`prefs_num_prefs_poss` reads preference judgments",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(what), "{args:?}: {e}");
    }
    assert!(run(&["-R", "qrels", "-T", "trec_results"]).status.success());
}
