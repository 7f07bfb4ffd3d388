//! One engine behind every door: the command, the library's front door (`Job`, streamed or with
//! the actual sets held), an `Evaluator` on a whole input, a push `Session` (one, or several
//! merged), the async `Pool` and `evaluate_read`, and shards merged give the same summary (the
//! bytes `--format json` prints) and the same per-goal values, to the bit. The inputs are
//! generated: graded judgments, ties, goals of the actual sets the run never ranks, goals of the
//! run without an actual set, the run's goals in the qrels' order or shuffled.
//! (python/tests/test_doors.py holds the Python package and Ray to the same values.)

use futures::StreamExt;
use lemma_accum::{Measure, Summary};
use lemma_eval::aio::{evaluate_read, PoolOptions, RankedGoal};
use lemma_eval::output::{OutFormat, Writer};
use lemma_eval::{
    Evaluator, EvaluatorBuilder, GoalRow, Job, Partial, PartialMerger, PredictedInput, Predictions,
    SummaryOnly,
};
use lemma_tools::gen::{generate_trec, goal_blocks, GenSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const MEASURES: [&str; 11] = [
    "AP",
    "P@5",
    "R@10",
    "RR",
    "nDCG@10",
    "Rprec",
    "Bpref",
    "AP11",
    "NumRel",
    "NumRelRet",
    "Depth(recall=1.0)",
];

/// Per goal, its values' bits (`None`: undefined).
type Rows = BTreeMap<String, Vec<Option<u64>>>;

fn rows_of(rows: &[GoalRow]) -> Rows {
    let mut m = Rows::new();
    for r in rows {
        let v = r.values.iter().map(|v| v.map(f64::to_bits)).collect();
        let goal = String::from_utf8(r.goal.clone()).unwrap();
        assert!(m.insert(goal, v).is_none(), "one row a goal");
    }
    m
}

/// The summary as `eval --format json` prints it.
fn json(measures: &[Measure], summary: &Summary) -> String {
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, OutFormat::Json, measures);
    w.begin(false).unwrap();
    w.finish(summary, false).unwrap();
    String::from_utf8(out).unwrap()
}

fn builder() -> EvaluatorBuilder {
    Evaluator::builder()
        .measure_names(MEASURES)
        .unwrap()
        .threads(2)
        .batch_bytes(3000)
}

/// The standard output of `cmd`, which must succeed.
fn succeeded(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Qrels and a run: the run drops every 7th goal of the generated one (goals the actual sets have
/// and the run never ranks) and, when `shuffled`, lists its goals in a seeded order.
fn inputs(dir: &Path, seed: u64, shuffled: bool) -> (PathBuf, PathBuf) {
    let spec = GenSpec {
        goals: 160,
        universe: 400,
        depth: 40,
        empty_share: 0.15,
        graded: true,
        tie_share: 0.25,
        seed,
        ..GenSpec::default()
    };
    let (mut q, mut r) = (Vec::new(), Vec::new());
    generate_trec(&spec, &mut q, &mut r).unwrap();
    let mut blocks: Vec<String> = goal_blocks(&String::from_utf8(r).unwrap())
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 7 != 3)
        .map(|(_, b)| b)
        .collect();
    if shuffled {
        let mut x = seed | 1;
        for i in (1..blocks.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            blocks.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
    let (qp, rp) = (dir.join("qrels.txt"), dir.join("run.txt"));
    std::fs::write(&qp, q).unwrap();
    std::fs::write(&rp, blocks.concat()).unwrap();
    (qp, rp)
}

/// The goals pushed round-robin into `n` sessions of `ev`, the sessions merged into one (one
/// session: the goals pushed into it).
fn merged_sessions(ev: &Evaluator, gs: &[RankedGoal], n: usize) -> lemma_eval::Session {
    let mut parts: Vec<_> = (0..n).map(|_| ev.session().unwrap()).collect();
    for (i, g) in gs.iter().enumerate() {
        g.push_into(&mut parts[i % n]).unwrap();
    }
    let mut merged = parts.remove(0);
    for p in parts {
        merged.merge(p).unwrap();
    }
    merged
}

/// The goals pushed through `ev`'s async `Pool` (two workers, eight goals in flight, no rows).
fn pooled(ev: &Evaluator, gs: &[RankedGoal]) -> lemma_eval::Evaluation {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let opts = PoolOptions {
            workers: Some(2),
            in_flight: 8,
            rows: false,
        };
        let pool = ev.pool(opts).unwrap();
        for g in gs.iter().cloned() {
            pool.push(g).await.unwrap();
        }
        pool.finish().await.unwrap()
    })
}

/// The run's goals as the push API takes them, in file order.
fn goals(run: &Path) -> Vec<RankedGoal> {
    goal_blocks(&std::fs::read_to_string(run).unwrap())
        .iter()
        .map(|b| {
            let mut goal = String::new();
            let items: Vec<(String, f64)> = b
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    goal = f[0].to_string();
                    (f[2].to_string(), f[4].parse().unwrap())
                })
                .collect();
            RankedGoal::scored(goal, items)
        })
        .collect()
}

/// The command's summary (`--format json`) and per-goal values (`--per-goal --format json`).
fn command(q: &Path, r: &Path) -> (String, Rows) {
    let run = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lemma-eval"));
        c.arg("eval")
            .arg(q)
            .arg(r)
            .args(["--format", "json", "--quiet"]);
        for m in MEASURES {
            c.args(["-m", m]);
        }
        String::from_utf8(succeeded(c.args(extra))).unwrap()
    };
    let summary = run(&[]);
    let doc: serde_json::Value = serde_json::from_str(&run(&["--per-goal"])).unwrap();
    let mut rows = Rows::new();
    for g in doc["per_goal"].as_array().unwrap() {
        let values = &g["values"];
        let v = MEASURES
            .iter()
            .map(|m| {
                let m = Measure::parse_all([*m]).unwrap()[0].to_string();
                values.get(&m).and_then(|x| x.as_f64()).map(f64::to_bits)
            })
            .collect();
        rows.insert(g["goal"].as_str().unwrap().to_string(), v);
    }
    (summary, rows)
}

#[test]
fn every_door_gives_the_commands_values() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    for (seed, shuffled) in [(3, false), (3, true), (11, false), (11, true)] {
        let (q, r) = inputs(dir.path(), seed, shuffled);
        let case = format!("seed {seed}, shuffled {shuffled}");
        let (want, want_rows) = command(&q, &r);
        let ev = builder().build_from_path(&q).unwrap();
        let measures = ev.plan().measures().to_vec();
        let check = |door: &str, s: &Summary, rows: Option<&[GoalRow]>| {
            assert_eq!(json(&measures, s), want, "{door}, {case}");
            if let Some(rows) = rows {
                assert_eq!(rows_of(rows), want_rows, "{door}, {case}");
            }
        };

        // The front door, as the command takes it: streamed along the qrels, or held.
        for hold in [false, true] {
            let mut rows = Vec::new();
            let done = Job::new(builder(), q.as_path(), r.as_path())
                .hold_actual(hold)
                .run(&mut rows, None)
                .unwrap();
            let way = done.actual_read.kind();
            assert_eq!(way, if hold { "held" } else { "joined" }, "{case}");
            check(
                &format!("Job ({way})"),
                &done.evaluation.summary,
                Some(&rows),
            );
        }

        // An Evaluator on the whole file.
        let mut rows = Vec::new();
        let done = ev
            .evaluate(Predictions::open(&r, None, false).unwrap(), &mut rows)
            .unwrap();
        check("Evaluator", &done.summary, Some(&rows));

        // A push session, goal by goal; three sessions merged.
        let gs = goals(&r);
        let mut s = ev.session().unwrap();
        let mut pushed = Vec::new();
        for g in &gs {
            if let Some(v) = g.push_into(&mut s).unwrap().values() {
                pushed.push(GoalRow {
                    goal: g.goal().as_bytes().to_vec(),
                    values: v.to_vec(),
                    empty: false,
                });
            }
        }
        let done = s.finish(&mut pushed).unwrap();
        check("Session", &done.summary, Some(&pushed));
        let merged = merged_sessions(&ev, &gs, 3);
        check(
            "Sessions merged",
            &merged.finish(&mut SummaryOnly).unwrap().summary,
            None,
        );

        // The async pool, rows read while the goals are pushed; bytes from an AsyncRead.
        let (done, rows) = rt.block_on(async {
            let opts = PoolOptions {
                workers: Some(2),
                in_flight: 8,
                rows: true,
            };
            let mut pool = ev.pool(opts).unwrap();
            let rows = tokio::spawn(pool.rows().unwrap().collect::<Vec<GoalRow>>());
            for g in gs.clone() {
                pool.push(g).await.unwrap();
            }
            let done = pool.finish().await.unwrap();
            (done, rows.await.unwrap())
        });
        check("Pool", &done.summary, Some(&rows));
        let done = rt
            .block_on(async {
                let f = tokio::fs::File::open(&r).await.unwrap();
                evaluate_read(&ev, &r, f).await
            })
            .unwrap();
        check("evaluate_read", &done.summary, None);

        // Shards of the file, each through the front door, merged (in another order).
        let n = 4;
        let mut shards: Vec<Partial> = (1..=n)
            .map(|index| {
                let shard = PredictedInput::Shard {
                    path: r.clone(),
                    index,
                    count: n,
                };
                Job::new(builder(), q.as_path(), shard)
                    .run(&mut SummaryOnly, None)
                    .unwrap()
                    .partial
                    .expect("a shard's summary travels")
            })
            .collect();
        shards.reverse();
        let mut m = PartialMerger::new();
        for (i, p) in shards.into_iter().enumerate() {
            m.add(&format!("shard {i}"), p).unwrap();
        }
        let (merged, lacking) = m.finish(false).unwrap();
        assert!(lacking.is_empty());
        check("shards merged", &merged.summary().unwrap(), None);
    }
}

/// Writes `goals.jsonl` in `d`: a record `{"goal_id", "file_path": "F{i % files}.lean"}` for
/// the `i`-th goal of `qrels` (TREC lines, goals in order), but for one goal in twelve (those
/// with `i % 12 == skip`), which is left without a record.
fn goal_records(d: &Path, qrels: &str, skip: usize, files: usize) -> PathBuf {
    let mut goal_names: Vec<&str> = qrels
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    goal_names.dedup();
    let records: String = (goal_names.iter().enumerate())
        .filter(|(i, _)| i % 12 != skip)
        .map(|(i, g)| {
            format!(
                "{{\"goal_id\": \"{g}\", \"file_path\": \"F{}.lean\"}}\n",
                i % files
            )
        })
        .collect();
    let gp = d.join("goals.jsonl");
    std::fs::write(&gp, records).unwrap();
    gp
}

/// `--by gold-size --by novelty --train-premises FILE --by file` (attributes from `--goals
/// FILE`, a goal in twelve without one): the command's summary and strata (`--format json`) are
/// those of the front door (streamed and held), an `Evaluator`, a push `Session`, three
/// sessions merged and the async `Pool`; the session and the pool report the goals in no
/// stratum as the front door does.
#[test]
fn every_door_gives_the_commands_strata() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (seed, shuffled) in [(5, false), (5, true)] {
        let (q, r) = inputs(d, seed, shuffled);
        let qrels = std::fs::read_to_string(&q).unwrap();
        // Every other lemma of the qrels was seen in training; goals' files from --goals.
        let mut lemmas: Vec<&str> = qrels
            .lines()
            .map(|l| l.split(' ').nth(2).unwrap())
            .collect();
        lemmas.sort_unstable();
        lemmas.dedup();
        let train: String = lemmas.iter().step_by(2).map(|l| format!("{l}\n")).collect();
        let gp = goal_records(d, &qrels, 5, 3);
        let tp = d.join("train.txt");
        std::fs::write(&tp, train).unwrap();
        let (t, g) = (tp.to_str().unwrap(), gp.to_str().unwrap());
        let by = [
            "--by",
            "gold-size",
            "--by",
            "novelty",
            "--train-premises",
            t,
            "--by",
            "file",
            "--goals",
            g,
        ];
        let mut c = Command::new(env!("CARGO_BIN_EXE_lemma-eval"));
        c.arg("eval")
            .arg(&q)
            .arg(&r)
            .args(["--format", "json", "--quiet"]);
        for m in MEASURES {
            c.args(["-m", m]);
        }
        let want = String::from_utf8(succeeded(c.args(by))).unwrap();
        assert!(want.contains("\"stratum\":\"novelty=seen\""), "{want}");
        assert!(want.contains("\"stratum\":\"file=F2.lean\""), "{want}");

        let strata = || {
            let from = lemma_eval::StrataSources {
                actual: Some(q.clone()),
                goals: Some(gp.clone()),
                train_premises: Some(tp.clone()),
                relevance_level: 1,
                strict: false,
            };
            let keys = ["gold-size", "novelty", "file"].map(String::from);
            std::sync::Arc::new(lemma_eval::Strata::load(&keys, &from).unwrap())
        };
        let case = format!("seed {seed}, shuffled {shuffled}");
        let ev = builder().strata(strata()).build_from_path(&q).unwrap();
        let measures = ev.plan().measures().to_vec();
        let check =
            |door: &str, s: &Summary| assert_eq!(json(&measures, s), want, "{door}, {case}");
        // What the strata met (goals in no stratum of `file`), as the front door reports it.
        let mut met = None;
        for hold in [false, true] {
            let done = Job::new(builder().strata(strata()), q.as_path(), r.as_path())
                .hold_actual(hold)
                .run(&mut SummaryOnly, None)
                .unwrap();
            check(&format!("Job (hold {hold})"), &done.evaluation.summary);
            met = done.evaluation.report.strata;
        }
        assert!(
            met.as_ref()
                .is_some_and(|m| m.missing.iter().any(|k| k.1 > 0)),
            "{met:?}"
        );
        let done = ev
            .evaluate(
                Predictions::open(&r, None, false).unwrap(),
                &mut SummaryOnly,
            )
            .unwrap();
        check("Evaluator", &done.summary);
        let gs = goals(&r);
        let s = merged_sessions(&ev, &gs, 1);
        // A session's summary file would drop the strata: refused, as the command's is.
        let e = s.partial().unwrap_err().to_string();
        assert!(
            e.contains("--by gold-size --by novelty --by file: a summary that"),
            "{e}"
        );
        // What the strata met, from a session and the pool of `ev`, whose evaluations above
        // met the same goals (each evaluation counts its own).
        let done = s.finish(&mut SummaryOnly).unwrap();
        check("Session", &done.summary);
        assert_eq!(done.report.strata, met, "Session, {case}");
        let merged = merged_sessions(&ev, &gs, 3);
        check(
            "Sessions merged",
            &merged.finish(&mut SummaryOnly).unwrap().summary,
        );
        let done = pooled(&ev, &gs);
        check("Pool", &done.summary);
        // The goal named is the first by name, whichever worker met it.
        assert_eq!(done.report.strata, met, "Pool, {case}");
    }
}

/// `--group-by file --goals FILE` (a goal in twelve without a record: a group of its own): the
/// command's summary (`--format json`, means over groups) is that of the front door (streamed and
/// held), an `Evaluator`, a push `Session`, three sessions merged and the async `Pool`, whose
/// reports count the groups and the goals without one as the front door's does.
#[test]
fn every_door_gives_the_commands_groups() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The measures with a mean over groups (a depth has none).
    let measures = &MEASURES[..MEASURES.len() - 1];
    let grouped = || {
        Evaluator::builder()
            .measure_names(measures)
            .unwrap()
            .threads(2)
            .batch_bytes(3000)
    };
    for (seed, shuffled) in [(6, false), (6, true)] {
        let (q, r) = inputs(d, seed, shuffled);
        let qrels = std::fs::read_to_string(&q).unwrap();
        let gp = goal_records(d, &qrels, 7, 5);
        let mut c = Command::new(env!("CARGO_BIN_EXE_lemma-eval"));
        c.arg("eval")
            .arg(&q)
            .arg(&r)
            .args([
                "--format",
                "json",
                "--quiet",
                "--group-by",
                "file",
                "--goals",
            ])
            .arg(&gp);
        for m in measures {
            c.args(["-m", m]);
        }
        let want = String::from_utf8(succeeded(&mut c)).unwrap();
        let groups = || {
            let g = lemma_eval::GroupBy::load("file", None, Some(&gp), false).unwrap();
            std::sync::Arc::new(g)
        };
        let case = format!("seed {seed}, shuffled {shuffled}");
        let ev = grouped().group_by(groups()).build_from_path(&q).unwrap();
        let plan = ev.plan().measures().to_vec();
        let check = |door: &str, s: &Summary| assert_eq!(json(&plan, s), want, "{door}, {case}");
        let mut met = None;
        for hold in [false, true] {
            let done = Job::new(grouped().group_by(groups()), q.as_path(), r.as_path())
                .hold_actual(hold)
                .run(&mut SummaryOnly, None)
                .unwrap();
            check(&format!("Job (hold {hold})"), &done.evaluation.summary);
            met = done.evaluation.report.groups;
        }
        let m = met.as_ref().expect("the groups' report");
        // Five files, and each goal without one a group of its own.
        assert!(m.ungrouped > 0, "{m:?}");
        assert_eq!(m.groups, 5 + m.ungrouped, "{m:?}");
        let done = ev
            .evaluate(
                Predictions::open(&r, None, false).unwrap(),
                &mut SummaryOnly,
            )
            .unwrap();
        check("Evaluator", &done.summary);
        let gs = goals(&r);
        let done = merged_sessions(&ev, &gs, 1)
            .finish(&mut SummaryOnly)
            .unwrap();
        check("Session", &done.summary);
        assert_eq!(done.report.groups, met, "Session, {case}");
        let merged = merged_sessions(&ev, &gs, 3);
        check(
            "Sessions merged",
            &merged.finish(&mut SummaryOnly).unwrap().summary,
        );
        let done = pooled(&ev, &gs);
        check("Pool", &done.summary);
        assert_eq!(done.report.groups, met, "Pool, {case}");
    }
}

/// The premise protocol (`--corpus --mask accessible`, the leak and origin measures) behind every
/// door: the command's summary (`--format json`) and premise counts are those of the command with
/// the corpus in binary form, the front door (streamed and held), an `Evaluator`, a push
/// `Session` (one, and three merged) and the async `Pool`, by name and by premise number, on a
/// generated library, one goal in seven placed past its file's last premise.
#[test]
fn every_door_masks_as_the_command() {
    const PM: [&str; 7] = [
        "AP",
        "R@10",
        "RR",
        "Leak@5",
        "LeakRank",
        "R(origin=in-file)@10",
        "R(origin=imported)@10",
    ];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = env!("CARGO_BIN_EXE_lemma-eval");
    for seed in [2, 9] {
        let (c, a, r, lec) = (
            d.join("corpus.jsonl"),
            d.join("actual.jsonl"),
            d.join("run.txt"),
            d.join("corpus.lec"),
        );
        succeeded(
            Command::new(bin)
                .arg("gen")
                .arg("--corpus")
                .arg(&c)
                .arg("--qrels")
                .arg(&a)
                .arg("--run")
                .arg(&r)
                .args(["--goals", "80", "--universe", "600", "--depth", "40"])
                .args(["--seed", &seed.to_string()]),
        );
        succeeded(
            Command::new(bin)
                .args(["convert", "--corpus"])
                .arg(&c)
                .arg("-o")
                .arg(&lec),
        );
        // One goal in seven placed past its file's last premise (`--goals`): counted alike.
        let late = d.join("late.jsonl");
        let records: String = (std::fs::read_to_string(&a).unwrap().lines())
            .step_by(7)
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!(
                    "{{\"goal_id\": {}, \"file_path\": {}, \"theorem_pos\": [99999, 1]}}\n",
                    v["goal_id"], v["file_path"]
                )
            })
            .collect();
        std::fs::write(&late, records).unwrap();
        // The command's summary and counts, with the corpus as text and in binary form.
        let command = |corpus: &Path| {
            let mut cmd = Command::new(bin);
            cmd.arg("eval").arg(&a).arg(&r).arg("--corpus").arg(corpus);
            cmd.arg("--goals").arg(&late);
            cmd.args(["--mask", "accessible", "--format", "json", "--quiet"]);
            for m in PM {
                cmd.args(["-m", m]);
            }
            let doc: serde_json::Value = serde_json::from_slice(&succeeded(&mut cmd)).unwrap();
            (doc["summary"].clone(), doc["premises"].clone())
        };
        let (want, want_counts) = command(&c);
        assert_eq!(
            command(&lec),
            (want.clone(), want_counts.clone()),
            "seed {seed}"
        );
        assert!(want_counts["masked"].as_u64().unwrap() > 0, "{want_counts}");
        assert!(
            want_counts["goals_past_last_premise"].as_u64().unwrap() > 0,
            "{want_counts}"
        );
        let opts = lemma_eval::PremiseOptions {
            corpus: c.clone(),
            mask: lemma_eval::MaskMode::Accessible,
            goals: Some(late.clone()),
            ..Default::default()
        };
        let premises = std::sync::Arc::new(lemma_eval::Premises::load(&opts, Some(&a)).unwrap());
        let pbuilder = || Evaluator::builder().measure_names(PM).unwrap().threads(2);
        let ev = pbuilder()
            .premises(premises.clone())
            .build_from_path(&a)
            .unwrap();
        let measures = ev.plan().measures().to_vec();
        let check = |door: &str, s: &Summary, counts: &lemma_eval::PremiseReport| {
            let got: serde_json::Value = serde_json::from_str(&json(&measures, s)).unwrap();
            assert_eq!(got["summary"], want, "{door}, seed {seed}");
            let named: serde_json::Map<String, serde_json::Value> = (counts.counts().iter())
                .map(|&(k, v)| (k.to_string(), v.into()))
                .collect();
            assert_eq!(
                serde_json::Value::Object(named),
                want_counts,
                "{door}, seed {seed}"
            );
        };
        for hold in [false, true] {
            let done = Job::new(pbuilder(), a.as_path(), r.as_path())
                .premises(Some(opts.clone()))
                .hold_actual(hold)
                .run(&mut SummaryOnly, None)
                .unwrap();
            let e = &done.evaluation;
            check(
                &format!("Job (hold {hold})"),
                &e.summary,
                &e.report.premises,
            );
        }
        let done = ev
            .evaluate(
                Predictions::open(&r, None, false).unwrap(),
                &mut SummaryOnly,
            )
            .unwrap();
        check("Evaluator", &done.summary, &done.report.premises);
        let gs = goals(&r);
        let done = merged_sessions(&ev, &gs, 1)
            .finish(&mut SummaryOnly)
            .unwrap();
        check("Session", &done.summary, &done.report.premises);
        let done = merged_sessions(&ev, &gs, 3)
            .finish(&mut SummaryOnly)
            .unwrap();
        check("Sessions merged", &done.summary, &done.report.premises);
        let done = pooled(&ev, &gs);
        check("Pool", &done.summary, &done.report.premises);
        // The same goals by premise number (each ranked by the trec rule: score descending,
        // equal scores by name descending), pushed to a session, three merged and the Pool.
        let numbered: Vec<RankedGoal> = (gs.iter())
            .map(|g| {
                let RankedGoal::Scored { goal, items } = g else {
                    unreachable!("goals() gives scored goals")
                };
                let mut items = items.clone();
                items.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
                let ids = (items.iter()).map(|(n, _)| {
                    (premises.corpus().premise_id(n.as_bytes()))
                        .expect("gen ranks the corpus's premises")
                });
                RankedGoal::premise_ids(goal.clone(), ids)
            })
            .collect();
        for n in [1, 3] {
            let done = merged_sessions(&ev, &numbered, n)
                .finish(&mut SummaryOnly)
                .unwrap();
            let door = format!("Sessions by premise number ({n})");
            check(&door, &done.summary, &done.report.premises);
        }
        let done = pooled(&ev, &numbered);
        check(
            "Pool by premise number",
            &done.summary,
            &done.report.premises,
        );
        // `--by origin` in place of the origin measures named: the same summary from the
        // command, a session and the Pool (json's summary is an object: the order aside).
        let split: Vec<&str> = PM
            .into_iter()
            .filter(|m| !m.starts_with("R(origin"))
            .collect();
        let mut cmd = Command::new(bin);
        cmd.arg("eval").arg(&a).arg(&r).arg("--corpus").arg(&c);
        cmd.arg("--goals").arg(&late);
        cmd.args([
            "--mask",
            "accessible",
            "--format",
            "json",
            "--quiet",
            "--by",
            "origin",
        ]);
        for m in &split {
            cmd.args(["-m", m]);
        }
        let doc: serde_json::Value = serde_json::from_slice(&succeeded(&mut cmd)).unwrap();
        assert_eq!(doc["summary"], want, "--by origin, seed {seed}");
        let origin = lemma_eval::Strata::load(&["origin".into()], &Default::default()).unwrap();
        let ev = (Evaluator::builder()
            .measure_names(&split)
            .unwrap()
            .threads(2))
        .premises(premises.clone())
        .strata(std::sync::Arc::new(origin))
        .build_from_path(&a)
        .unwrap();
        let split_measures = ev.plan().measures().to_vec();
        let session = merged_sessions(&ev, &gs, 1)
            .finish(&mut SummaryOnly)
            .unwrap()
            .summary;
        for (door, s) in [("Session", session), ("Pool", pooled(&ev, &gs).summary)] {
            let got: serde_json::Value = serde_json::from_str(&json(&split_measures, &s)).unwrap();
            assert_eq!(got["summary"], want, "{door} --by origin, seed {seed}");
        }
    }
}
