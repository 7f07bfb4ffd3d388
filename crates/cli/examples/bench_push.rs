//! Throughput of the push and async APIs (scripts/bench-push runs it; BENCHMARKS.md has the
//! figures).
//!
//! ```text
//! bench_push QRELS RUN                 push names, push ids, async stream: items/s, 5 rounds each
//! bench_push QRELS RUN --rss ITEMS     async stream of the run's first ITEMS items, read as it
//!                                      goes (64 goals in flight): prints the peak RSS
//! ```

use lemma_eval::aio::{evaluate_stream, PoolOptions, RankedGoal};
use lemma_eval::{Evaluator, SummaryOnly};
use std::io::BufRead;
use std::time::Instant;

/// The run's goals, each ranked (trec order: score, then name, descending).
fn read_goals(run: &str) -> Vec<(String, Vec<String>)> {
    let mut goals: Vec<(String, Vec<(f64, String)>)> = Vec::new();
    let f = std::io::BufReader::new(std::fs::File::open(run).unwrap());
    for line in f.lines() {
        let line = line.unwrap();
        let mut it = line.split_whitespace();
        let (g, _, l, _, s) = (it.next(), it.next(), it.next(), it.next(), it.next());
        let (g, l, s) = (g.unwrap(), l.unwrap(), s.unwrap().parse::<f64>().unwrap());
        match goals.last_mut() {
            Some((name, items)) if name == g => items.push((s, l.to_string())),
            _ => goals.push((g.to_string(), vec![(s, l.to_string())])),
        }
    }
    goals
        .into_iter()
        .map(|(g, mut items)| {
            items.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
            (g, items.into_iter().map(|(_, l)| l).collect())
        })
        .collect()
}

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (qrels, run) = (&args[0], &args[1]);
    let ev = Evaluator::builder()
        .threads(2)
        .build_from_path(qrels.as_ref())
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let opts = PoolOptions {
        workers: Some(2),
        in_flight: 64,
        rows: false,
    };
    if args.get(2).map(String::as_str) == Some("--rss") {
        let limit: u64 = args[3].parse().unwrap();
        // Goals read from the file as they are pushed: nothing held but the goals in flight.
        let f = std::io::BufReader::new(std::fs::File::open(run).unwrap());
        let mut lines = f.lines().map(Result::unwrap).peekable();
        let mut items = 0u64;
        let goals = futures::stream::iter(std::iter::from_fn(move || {
            if items >= limit {
                return None;
            }
            let first = lines.next()?;
            let goal = first.split(' ').next().unwrap().to_string();
            let mut ranked = vec![(
                first.split(' ').nth(4).unwrap().parse::<f64>().unwrap(),
                first.split(' ').nth(2).unwrap().to_string(),
            )];
            while let Some(l) = lines.next_if(|l| l.split(' ').next() == Some(&goal)) {
                let mut f = l.split(' ').skip(2);
                let lemma = f.next().unwrap().to_string();
                ranked.push((f.nth(1).unwrap().parse().unwrap(), lemma));
            }
            items += ranked.len() as u64;
            Some(RankedGoal::Scored {
                goal,
                items: ranked.into_iter().map(|(s, l)| (l, s)).collect(),
            })
        }));
        let t = Instant::now();
        let done = rt.block_on(evaluate_stream(&ev, goals, opts)).unwrap();
        let secs = t.elapsed().as_secs_f64();
        println!(
            "rss: {limit} items, {} goals evaluated, {secs:.2} s, peak RSS {:.1} MB",
            done.summary.counts().evaluated,
            peak_rss_mb()
        );
        return;
    }
    let goals = read_goals(run);
    let items: u64 = goals.iter().map(|(_, l)| l.len() as u64).sum();
    let mut next = ev.lemma_count();
    let mut ids_of = std::collections::HashMap::new();
    let id_goals: Vec<(String, Vec<u32>)> = goals
        .iter()
        .map(|(g, ls)| {
            let ids = ls
                .iter()
                .map(|l| {
                    *ids_of.entry(l.clone()).or_insert_with(|| {
                        ev.lemma_id(l).unwrap_or_else(|| {
                            next += 1;
                            next - 1
                        })
                    })
                })
                .collect();
            (g.clone(), ids)
        })
        .collect();
    let report = |what: &str, secs: &[f64]| {
        let rates: Vec<f64> = secs.iter().map(|s| items as f64 / s / 1e6).collect();
        let (lo, hi) = rates
            .iter()
            .fold((f64::MAX, 0f64), |(a, b), &r| (a.min(r), b.max(r)));
        println!(
            "{what}: {items} items, {lo:.1}-{hi:.1} M items/s over {} rounds",
            secs.len()
        );
    };
    let (mut names_t, mut ids_t, mut async_t) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        // Alternated, so that a noisy neighbour hurts every contender alike.
        let t = Instant::now();
        let mut s = ev.session().unwrap();
        for (g, ls) in &goals {
            s.push_ranked(g, ls).unwrap();
        }
        let names = s.finish(&mut SummaryOnly).unwrap();
        names_t.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut s = ev.session().unwrap();
        for (g, ids) in &id_goals {
            s.push_ids(g, ids).unwrap();
        }
        let by_id = s.finish(&mut SummaryOnly).unwrap();
        ids_t.push(t.elapsed().as_secs_f64());
        assert_eq!(names.summary, by_id.summary);
        // The goals are built before the clock starts and moved into the stream (a producer that
        // has its goals; the strings are freed by the workers).
        let ranked: Vec<RankedGoal> = goals
            .iter()
            .map(|(g, ls)| RankedGoal::ranked(g.clone(), ls.iter().cloned()))
            .collect();
        let stream = futures::stream::iter(ranked);
        let t = Instant::now();
        let streamed = rt.block_on(evaluate_stream(&ev, stream, opts)).unwrap();
        async_t.push(t.elapsed().as_secs_f64());
        assert_eq!(names.summary, streamed.summary);
    }
    report("push names, 1 thread", &names_t);
    report("push ids, 1 thread", &ids_t);
    report("async stream of names, 2 workers, 64 in flight", &async_t);
}
