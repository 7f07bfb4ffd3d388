//! The push API and travelling summaries against the file path: the same goals give the same
//! summary, to the bit, whichever way they arrive (pushed as names, scored pairs or ids, from one
//! or two threads; files evaluated with 1 or 2 workers; shards merged through their encodings).

use lemma_eval::{
    EvalError, Evaluator, GoalRow, Job, OrderMode, Partial, Predictions, Pushed, Session,
    SummaryOnly, TieMode,
};
use lemma_tools::gen::{generate_trec, GenSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A run's goals in file order, each with its (lemma, score) lines in file order.
type Goals = Vec<(String, Vec<(String, f64)>)>;

fn read_run(path: &Path) -> Goals {
    let mut goals: Goals = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 6 {
            continue;
        }
        let item = (f[2].to_string(), f[4].parse::<f64>().unwrap());
        match goals.last_mut() {
            Some((g, items)) if g == f[0] => items.push(item),
            _ => goals.push((f[0].to_string(), vec![item])),
        }
    }
    goals
}

/// The summary as text: every aggregate's bits and the goal counts.
fn key(s: &lemma_accum::Summary) -> String {
    format!("{:?} {:?}", s.aggregates(), s.counts())
}

fn evaluator(qrels: &Path, measures: &[&str], ties: TieMode, threads: usize) -> Evaluator {
    Evaluator::builder()
        .measure_names(measures)
        .unwrap()
        .ties(ties)
        .threads(threads)
        .batch_bytes(4096)
        .build_from_path(qrels)
        .unwrap()
}

fn file_eval(ev: &Evaluator, run: &Path) -> (String, Vec<GoalRow>) {
    let mut rows = Vec::new();
    let done = ev
        .evaluate(Predictions::open(run, None, false).unwrap(), &mut rows)
        .unwrap();
    (key(&done.summary), rows)
}

/// A goal's lemmas in trec_eval's order: score descending, then name descending.
fn trec_ranked(items: &[(String, f64)]) -> Vec<&str> {
    let mut v: Vec<&(String, f64)> = items.iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    v.into_iter().map(|(n, _)| n.as_str()).collect()
}

#[derive(Copy, Clone, Debug)]
enum Way {
    Ranked,
    Scored,
    /// The pairs in reverse: sorted at the goal's end rather than streamed.
    ScoredReversed,
    /// `push_scored_distinct` (the run's goals hold distinct names), streamed and reversed.
    ScoredDistinct,
    /// `push_scored_joined`: the names joined one a line beforehand, streamed and reversed.
    ScoredJoined,
    Ids,
}

/// Pushes `goals` (those whose index is `k` modulo `of`) into a session, checking each goal's
/// values against `rows` (the file path's).
fn push_all(
    s: &mut Session,
    goals: &Goals,
    way: Way,
    k: usize,
    of: usize,
    rows: &HashMap<String, Vec<Option<f64>>>,
    ids: &HashMap<String, u32>,
) {
    for (i, (goal, items)) in goals.iter().enumerate() {
        if i % of != k {
            continue;
        }
        let pushed = match way {
            Way::Scored => s.push_scored(goal, items),
            Way::ScoredReversed => {
                let reversed: Vec<(String, f64)> = items.iter().rev().cloned().collect();
                s.push_scored(goal, &reversed)
            }
            Way::ScoredDistinct => {
                let names: std::collections::HashSet<&String> =
                    items.iter().map(|(n, _)| n).collect();
                assert_eq!(names.len(), items.len(), "{goal}: names repeat");
                if i % 2 == 0 {
                    s.push_scored_distinct(goal, items)
                } else {
                    let reversed: Vec<(String, f64)> = items.iter().rev().cloned().collect();
                    s.push_scored_distinct(goal, &reversed)
                }
            }
            Way::ScoredJoined => {
                let mut pairs: Vec<&(String, f64)> = items.iter().collect();
                if i % 2 == 1 {
                    pairs.reverse();
                }
                let mut names = Vec::new();
                let mut scored = Vec::new();
                for (n, v) in pairs {
                    names.extend_from_slice(n.as_bytes());
                    names.push(b'\n');
                    scored.push((n.len() as u32, *v));
                }
                s.push_scored_joined(goal, &mut names, &scored)
            }
            Way::Ranked => s.push_ranked(goal, &trec_ranked(items)),
            Way::Ids => {
                let v: Vec<u32> = trec_ranked(items).iter().map(|n| ids[*n]).collect();
                s.push_ids(goal, &v)
            }
        }
        .unwrap();
        match (pushed, rows.get(goal)) {
            (Pushed::Evaluated(v), Some(want)) => assert_eq!(v, &want[..], "{way:?} {goal}"),
            (Pushed::Skipped(_), None) => {}
            (p, w) => panic!("{way:?} {goal}: pushed {p:?}, file row {w:?}"),
        }
    }
}

/// Ids for every lemma of the run: the evaluator's for judged ones, the caller's own above.
fn lemma_ids(ev: &Evaluator, goals: &Goals) -> HashMap<String, u32> {
    let mut ids = HashMap::new();
    let mut next = ev.lemma_count();
    for (_, items) in goals {
        for (n, _) in items {
            ids.entry(n.clone()).or_insert_with(|| {
                ev.lemma_id(n).unwrap_or_else(|| {
                    next += 1;
                    next - 1
                })
            });
        }
    }
    ids
}

/// Every way in, 1 and 2 threads, against the file with 1 and 2 workers.
fn check_all_ways(qrels: &Path, run: &Path, measures: &[&str], ties: TieMode) {
    let goals = read_run(run);
    let (want, rows) = file_eval(&evaluator(qrels, measures, ties, 1), run);
    let (want2, rows2) = file_eval(&evaluator(qrels, measures, ties, 2), run);
    assert_eq!(want, want2, "1 and 2 workers");
    assert_eq!(rows, rows2);
    let by_goal: HashMap<String, Vec<Option<f64>>> = rows
        .iter()
        .filter(|r| !r.empty)
        .map(|r| (String::from_utf8(r.goal.clone()).unwrap(), r.values.clone()))
        .collect();
    let ev = evaluator(qrels, measures, ties, 1);
    let ids = lemma_ids(&ev, &goals);
    // Without scores every lemma scores 0: one tie group; only scored pushes match then.
    let ways: &[Way] = match ties {
        TieMode::Group => &[
            Way::Scored,
            Way::ScoredReversed,
            Way::ScoredDistinct,
            Way::ScoredJoined,
        ],
        _ => &[
            Way::Scored,
            Way::ScoredReversed,
            Way::ScoredDistinct,
            Way::ScoredJoined,
            Way::Ranked,
            Way::Ids,
        ],
    };
    for &way in ways {
        // One thread.
        let mut s = ev.session().unwrap();
        push_all(&mut s, &goals, way, 0, 1, &by_goal, &ids);
        let mut empty_rows: Vec<GoalRow> = Vec::new();
        let done = s.finish(&mut empty_rows).unwrap();
        assert_eq!(key(&done.summary), want, "{way:?}, one session");
        let file_empty: Vec<&GoalRow> = rows.iter().filter(|r| r.empty).collect();
        assert_eq!(empty_rows.iter().collect::<Vec<_>>(), file_empty);
        // Two threads, a session each, merged.
        let sessions: Vec<Session> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2)
                .map(|k| {
                    let (ev, goals, by_goal, ids) = (&ev, &goals, &by_goal, &ids);
                    sc.spawn(move || {
                        let mut s = ev.session().unwrap();
                        push_all(&mut s, goals, way, k, 2, by_goal, ids);
                        s
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut it = sessions.into_iter();
        let mut a = it.next().unwrap();
        a.merge(it.next().unwrap()).unwrap();
        let done = a.finish(&mut SummaryOnly).unwrap();
        assert_eq!(key(&done.summary), want, "{way:?}, two sessions");
    }
}

const MEASURES: &[&str] = &[
    "AP",
    "AP@10",
    "P@1",
    "P@5",
    "R@10",
    "RR",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "Depth(recall=1.0)",
    "Depth(recall=0.5)",
    "P(recall=0.5)",
    "IPrec@0.3",
    "AP11",
    "Success@5",
    "GM_AP",
    "NumRet",
    "NumRelRet",
    "NumRel",
    "NumQ",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

#[test]
fn fixtures_every_way_equals_the_file() {
    for dir in ["seed", "graded", "ties", "missing", "split", "pooled"] {
        let (q, r) = (fixture(dir).join("qrels.txt"), fixture(dir).join("run.txt"));
        if dir == "split" {
            // Goals not contiguous: the file needs --regroup; pushes take the regrouped goals.
            continue;
        }
        for ties in [TieMode::Trec, TieMode::Group] {
            check_all_ways(&q, &r, MEASURES, ties);
        }
    }
}

/// A generated workload (ties, graded, goals without predictions and without actual sets).
fn generated(dir: &Path, seed: u64) -> (PathBuf, PathBuf) {
    let spec = GenSpec {
        goals: 300,
        universe: 5_000,
        depth: 60,
        tie_share: 0.2,
        graded: true,
        empty_share: 0.1,
        seed,
        ..GenSpec::default()
    };
    let (mut q, mut r) = (Vec::new(), Vec::new());
    generate_trec(&spec, &mut q, &mut r).unwrap();
    // Drop every 7th goal's lines from the run (goals without predictions) and add a goal no
    // actual set has.
    let text = String::from_utf8(r).unwrap();
    let mut kept = String::new();
    let mut goal_no = 0;
    let mut last = String::new();
    for line in text.lines() {
        let g = line.split_whitespace().next().unwrap().to_string();
        if g != last {
            goal_no += 1;
            last = g;
        }
        if goal_no % 7 != 3 {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept.push_str("nobody Q0 a 1 1 t\nnobody Q0 b 2 0.5 t\n");
    let (qp, rp) = (dir.join("qrels"), dir.join("run"));
    std::fs::write(&qp, q).unwrap();
    std::fs::write(&rp, kept).unwrap();
    (qp, rp)
}

#[test]
fn generated_workload_every_way_equals_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 7);
    check_all_ways(&q, &r, MEASURES, TieMode::Trec);
    check_all_ways(&q, &r, MEASURES, TieMode::Group);
}

/// A goal of 10,000 lemmas (past the items a deep goal ranks ahead) pushed as names equals the
/// same goal pushed with descending scores: every lemma ranked, the last ones included.
#[test]
fn deep_ranked_pushes_rank_every_lemma() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g 0 L9995 1\ng 0 L12 1\ng 0 L8500 1\n").unwrap();
    // Refusing repeats: the same values for lemmas that are distinct.
    let ev = Evaluator::builder()
        .measure_names(["NumRet", "AP", "RR"])
        .unwrap()
        .duplicates(lemma_eval::DuplicateMode::Error)
        .build_from_path(&q)
        .unwrap();
    let names: Vec<String> = (0..10_000).map(|i| format!("L{i}")).collect();
    let scored: Vec<(String, f64)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), 20_000.0 - i as f64))
        .collect();
    let mut s = ev.session().unwrap();
    let ranked = s.push_ranked("g", &names).unwrap();
    // NumRet 10,000; AP = (1/13 + 2/8501 + 3/9996) / 3; RR = 1/13.
    let ap = (1.0 / 13.0 + 2.0 / 8501.0 + 3.0 / 9996.0) / 3.0;
    match ranked {
        Pushed::Evaluated(v) => {
            assert_eq!(v[0], Some(10_000.0));
            assert!((v[1].unwrap() - ap).abs() < 1e-15, "{v:?}");
            assert!((v[2].unwrap() - 1.0 / 13.0).abs() < 1e-15, "{v:?}");
        }
        p => panic!("{p:?}"),
    }
    let mut t = ev.session().unwrap();
    let from_scores = t.push_scored("g", &scored).unwrap();
    let mut u = ev.session().unwrap();
    assert_eq!(u.push_ranked("g", &names).unwrap(), from_scores);
    // A repeat among the last lemmas is still found.
    let mut repeated = names.clone();
    repeated[9_999] = "L9990".into();
    let mut s = ev.session().unwrap();
    assert_eq!(
        s.push_ranked("g", &repeated).unwrap_err().to_string(),
        "goal `g`: lemma `L9990` appears twice"
    );
}

#[test]
fn push_errors_name_the_goal() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 a 1\ng2 0 b 1\n").unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .duplicates(lemma_eval::DuplicateMode::Error)
        .build_from_path(&q)
        .unwrap();
    let mut s = ev.session().unwrap();
    s.push_ranked("g1", &["a", "x"]).unwrap();
    let msg = |e: EvalError| e.to_string();
    assert_eq!(
        msg(s.push_ranked("g1", &["a"]).unwrap_err()),
        "goal `g1`: the goal was pushed twice"
    );
    assert_eq!(
        msg(s.push_ranked("g2", &["b", "y", "b"]).unwrap_err()),
        "goal `g2`: lemma `b` appears twice"
    );
    let mut s = ev.session().unwrap();
    assert_eq!(
        msg(s.push_ids("g2", &[0, 7, 7]).unwrap_err()),
        "goal `g2`: lemma `#7` appears twice"
    );
    assert_eq!(
        msg(s.push_scored("g1", &[("a", f64::NAN)]).unwrap_err()),
        "goal `g1`: lemma `a`: expected a finite score, got NaN"
    );
    assert_eq!(
        msg(s.push_ranked("g1", &["a b"]).unwrap_err()),
        "goal `g1`: expected a lemma name without whitespace, got `a b`"
    );
    assert!(msg(s.push_ids("g1", &[u32::MAX]).unwrap_err()).contains("expected an id below"));
    // Joined names whose lengths do not add up to the buffer: refused, nothing read past it.
    let mut names = b"a\nxy\n".to_vec();
    assert_eq!(
        msg(s
            .push_scored_joined("g1", &mut names, &[(1, 2.0), (3, 1.0)])
            .unwrap_err()),
        "goal `g1`: expected names of 6 bytes with their newlines, got 5"
    );
    let mut names = b"a\nxy\n".to_vec();
    assert_eq!(
        msg(s
            .push_scored_joined("g1", &mut names, &[(1, 2.0), (2, f64::INFINITY)])
            .unwrap_err()),
        "goal `g1`: lemma `xy`: expected a finite score, got inf"
    );
    // A failed push leaves the session as it was: g1 is pushed again after its failures.
    let x = s.push_ranked("g1", &["x", "a"]).unwrap();
    assert_eq!(x, Pushed::Evaluated(&[Some(0.5)]));
    let mut t = ev.session().unwrap();
    t.push_ranked("g1", &["a"]).unwrap();
    assert_eq!(
        msg(s.merge(t).unwrap_err()),
        "goal `g1`: the goal was pushed to both sessions"
    );
    let other = ev.clone().session().unwrap();
    s.merge(other).unwrap();
    let foreign = Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .build_from_path(&q)
        .unwrap();
    assert!(s.merge(foreign.session().unwrap()).is_err());
}

/// Every way a push can fail after its goal began (a repeated lemma as names, as scored pairs,
/// as ids; a score that is not finite; a universe too small for AUC) leaves the session as it
/// was: the goal is not pushed (it may be pushed again), and nothing of it is counted. A session
/// whose pushes failed, then succeeded, finishes as one whose pushes only succeeded; one whose
/// failed goals are never pushed again evaluates them as never pushed.
#[test]
fn a_failed_push_leaves_the_session_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 a 1\ng2 0 b 1\ng3 0 c 1\ng4 0 a 1\n").unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AP", "RR", "AUC"])
        .unwrap()
        .universe(Some(4))
        .duplicates(lemma_eval::DuplicateMode::Error)
        .build_from_path(&q)
        .unwrap();
    let (x, c) = (ev.lemma_id("a").unwrap(), ev.lemma_id("c").unwrap());
    // The pushes that succeed: g1 ranks a first (AP 1), g2 ranks b second (AP 1/2), g3 ranks c
    // third (AP 1/3), g4 as ids, a second (AP 1/2).
    let good = |s: &mut Session| {
        assert_eq!(
            s.push_ranked("g1", &["a", "x"]).unwrap().values().unwrap()[0],
            Some(1.0)
        );
        let g2 = s.push_scored("g2", &[("b", 1.0), ("y", 2.0)]).unwrap();
        assert_eq!(g2.values().unwrap()[0], Some(0.5));
        let g3 = s.push_ranked("g3", &["x", "y", "c"]).unwrap();
        assert_eq!(g3.values().unwrap()[0], Some(1.0 / 3.0));
        let g4 = s.push_ids("g4", &[c, x]).unwrap();
        assert_eq!(g4.values().unwrap()[0], Some(0.5));
    };
    let mut clean = ev.session().unwrap();
    good(&mut clean);
    let mut s = ev.session().unwrap();
    let msg = |e: EvalError| e.to_string();
    assert_eq!(
        msg(s.push_ranked("g1", &["a", "x", "a"]).unwrap_err()),
        "goal `g1`: lemma `a` appears twice"
    );
    assert_eq!(
        msg(s.push_scored("g2", &[("b", 1.0), ("b", 2.0)]).unwrap_err()),
        "goal `g2`: lemma `b` appears twice"
    );
    assert_eq!(
        msg(s.push_scored("g2", &[("b", f64::NAN)]).unwrap_err()),
        "goal `g2`: lemma `b`: expected a finite score, got NaN"
    );
    // Five lemmas ranked in a universe of four.
    assert!(msg(s.push_ranked("g3", &["c", "v", "w", "x", "y"]).unwrap_err()).contains("universe"));
    assert_eq!(
        msg(s.push_ids("g4", &[c, x, c]).unwrap_err()),
        "goal `g4`: lemma `c` appears twice"
    );
    assert_eq!(s.report().goals_in_predictions, 0);
    assert_eq!(s.report().items, 0);
    assert_eq!(
        s.summary().counts(),
        ev.session().unwrap().summary().counts()
    );
    // Never pushed again: each is evaluated as never pushed (an empty ranking, AP 0).
    let never = ev.session().unwrap();
    assert_eq!(key(&s.snapshot().unwrap()), key(&never.snapshot().unwrap()));
    // Pushed again: as if the failures had not been.
    good(&mut s);
    assert_eq!(s.report().goals_in_predictions, 4);
    assert_eq!(s.report().items, clean.report().items);
    let (a, b) = (
        s.finish(&mut SummaryOnly).unwrap(),
        clean.finish(&mut SummaryOnly).unwrap(),
    );
    assert_eq!(key(&a.summary), key(&b.summary));
    assert_eq!(a.report.goals_in_predictions, 4);
    // Mean AP over the four goals: (1 + 1/2 + 1/3 + 1/2) / 4.
    let lemma_accum::Aggregate::Mean(ap) = a.summary.aggregates()[0].1 else {
        panic!("AP is a mean");
    };
    assert!(
        (ap - (1.0 + 0.5 + 1.0 / 3.0 + 0.5) / 4.0).abs() < 1e-15,
        "{ap}"
    );
}

/// A failed push takes back what the premise protocol met in its goal, counts and named cases
/// alike: g2 (fixtures/premise) has a relevant premise not accessible at its place (`a1`) and
/// ranks one the corpus does not define (`zz`); pushed with a repeated lemma it fails, and the
/// report is a fresh session's (no warning names g2); pushed again it names both.
#[test]
fn a_failed_push_names_no_premise_case() {
    let dir = fixture("premise");
    let opts = lemma_eval::PremiseOptions {
        corpus: dir.join("corpus.jsonl"),
        mask: lemma_eval::MaskMode::Accessible,
        ..lemma_eval::PremiseOptions::default()
    };
    let actual = dir.join("actual.jsonl");
    let premises = lemma_eval::Premises::load(&opts, Some(&actual)).unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AP"])
        .unwrap()
        .duplicates(lemma_eval::DuplicateMode::Error)
        .premises(std::sync::Arc::new(premises))
        .build_from_path(&actual)
        .unwrap();
    let fresh = ev.session().unwrap().report().premises.clone();
    let mut s = ev.session().unwrap();
    let err = s.push_ranked("g2", &["zz", "c1", "c1"]).unwrap_err();
    assert_eq!(err.to_string(), "goal `g2`: lemma `c1` appears twice");
    assert_eq!(s.report().premises, fresh);
    assert!(s.report().premises.warnings().is_empty());
    s.push_ranked("g2", &["zz", "c1"]).unwrap();
    let p = &s.report().premises;
    assert_eq!((p.unknown_premises, p.gold_inaccessible), (1, 1));
    assert_eq!(
        p.first_unknown_premise,
        Some((b"g2".to_vec(), b"zz".to_vec()))
    );
    assert_eq!(
        p.first_gold_inaccessible,
        Some((b"g2".to_vec(), b"a1".to_vec()))
    );
}

/// Cuts `run` into `n` files of whole goals (goal `i` to shard `3 i mod n`); goals of the qrels
/// in no shard stay unseen.
fn shards(run: &Path, dir: &Path, n: usize) -> Vec<PathBuf> {
    let goals = read_run(run);
    let mut texts = vec![String::new(); n];
    for (i, (g, items)) in goals.iter().enumerate() {
        for (rank, (l, s)) in items.iter().enumerate() {
            texts[i * 3 % n] += &format!("{g} Q0 {l} {} {s} t\n", rank + 1);
        }
    }
    texts
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            let p = dir.join(format!("shard{k}"));
            std::fs::write(&p, t).unwrap();
            p
        })
        .collect()
}

#[test]
fn shards_merged_through_their_encodings_equal_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 11);
    for (ties, missing) in [
        (TieMode::Trec, lemma_eval::MissingMode::Zero),
        (TieMode::Group, lemma_eval::MissingMode::Skip),
    ] {
        let ev = Evaluator::builder()
            .measure_names(MEASURES)
            .unwrap()
            .ties(ties)
            .missing(missing)
            .zero_relevant(lemma_eval::ZeroRelMode::Evaluate)
            .build_from_path(&q)
            .unwrap();
        let whole = ev
            .evaluate(
                Predictions::open(&r, None, false).unwrap(),
                &mut SummaryOnly,
            )
            .unwrap();
        let files = shards(&r, dir.path(), 7);
        let mut parts: Vec<Partial> = Vec::new();
        for f in &files {
            let p = (Job::on(&ev, Predictions::open(f, None, false).unwrap()).mergeable(true))
                .run(&mut SummaryOnly, None)
                .unwrap()
                .partial
                .expect("asked for");
            let bytes = p.encode();
            let back = Partial::decode(&bytes).unwrap();
            assert_eq!(back, p);
            parts.push(back);
        }
        // Merged in two orders, and through a session's partial for one shard.
        for order in [[0, 1, 2, 3, 4, 5, 6], [6, 3, 0, 5, 2, 1, 4]] {
            let mut m = parts[order[0]].clone();
            for &k in &order[1..] {
                m.merge(&parts[k]).unwrap();
            }
            assert_eq!(key(&m.summary().unwrap()), key(&whole.summary), "{ties:?}");
            let again = Partial::decode(&m.encode()).unwrap();
            assert_eq!(key(&again.summary().unwrap()), key(&whole.summary));
        }
        // A goal in two shards.
        let mut m = parts[0].clone();
        let err = m.merge(&parts[0]).unwrap_err().to_string();
        assert!(err.contains("shards must hold disjoint goals"), "{err}");
        // A session's partial merges with a file's.
        let mut s = ev.session().unwrap();
        for (g, items) in read_run(&files[3]) {
            s.push_scored(&g, &items).unwrap();
        }
        let mut m = s.into_partial().unwrap();
        for (k, p) in parts.iter().enumerate() {
            if k != 3 {
                m.merge(p).unwrap();
            }
        }
        assert_eq!(key(&m.summary().unwrap()), key(&whole.summary));
    }
}

#[test]
fn mismatched_plans_and_damaged_encodings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (q, r) = generated(dir.path(), 3);
    let partial = |b: lemma_eval::EvaluatorBuilder, qrels: &Path| {
        let ev = b.build_from_path(qrels).unwrap();
        let pred = Predictions::open(&r, None, false).unwrap();
        let done = Job::on(&ev, pred)
            .mergeable(true)
            .run(&mut SummaryOnly, None);
        done.unwrap().partial.expect("asked for")
    };
    let base = || Evaluator::builder().measure_names(["AP", "P@5"]).unwrap();
    let a = partial(base(), &q);
    let mut m = a.clone();
    let e = m
        .merge(&partial(base().relevance_level(2).depth(Some(9)), &q))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "different options: relevance level: 1 vs 2; depth: none vs 9"
    );
    let e = m
        .merge(&partial(
            Evaluator::builder().measure_names(["AP"]).unwrap(),
            &q,
        ))
        .unwrap_err();
    assert_eq!(e.to_string(), "different options: measures: AP P@5 vs AP");
    let e = m
        .merge(&partial(
            base().order(OrderMode::File).ties(TieMode::Group),
            &q,
        ))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "different options: order: none vs some(file); ties: trec vs group"
    );
    // Other actual sets: one grade changed.
    let text = std::fs::read_to_string(&q).unwrap();
    let q2 = dir.path().join("q2");
    let first = text.lines().next().unwrap();
    let changed = first.rsplit_once(' ').unwrap().0.to_string() + " 9";
    std::fs::write(&q2, text.replacen(first, &changed, 1)).unwrap();
    let e = m.merge(&partial(base(), &q2)).unwrap_err().to_string();
    assert!(e.starts_with("different actual sets ("), "{e}");
    assert!(e.ends_with("with other goals, lemmas or grades)"), "{e}");
    assert_eq!(m, a, "unchanged by failed merges");
    // Damaged encodings.
    let bytes = a.encode();
    let dec = |b: &[u8]| Partial::decode(b).unwrap_err().to_string();
    assert_eq!(
        dec(b"goal\tAP\t0.5\n"),
        "not a lemma-eval summary file (expected it to begin with LEMSUMRY)"
    );
    assert!(dec(&bytes[..bytes.len() - 5]).starts_with("truncated: "));
    assert_eq!(dec(&bytes[..12]), "truncated: the header is cut short");
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    assert_eq!(
        dec(&flipped),
        "corrupt: the checksum does not match the contents"
    );
    let mut v4 = bytes.clone();
    v4[8] = 5;
    assert_eq!(dec(&v4), "summary format version 5, expected 4");
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(dec(&longer), "1 bytes after the end of the summary");
}

#[test]
fn options_that_cannot_push_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q");
    std::fs::write(&q, "g1 0 a 1\n").unwrap();
    let ev = Evaluator::builder()
        .measure_names(["AUC"])
        .unwrap()
        .build_from_path(&q)
        .unwrap();
    assert_eq!(
        ev.session().unwrap_err().to_string(),
        "AUC needs the universe size: pass --universe N"
    );
}
