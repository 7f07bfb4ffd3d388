//! Ranking order (METRICS.md §2) without I/O: trec_eval's comparator and a tie-run repairer.
//!
//! trec_eval ranks by score descending and breaks equal scores by lemma name in *descending* byte
//! order (`strcmp`: "b" before "a", "9" before "10"). Input that already arrives in that order
//! should not be sorted: [`TrecOrder`] passes items through as soon as their position is certain,
//! buffering only a run of equal scores (sorted by name, or any caller rule, when it closes). An item whose score is
//! *higher* than its predecessor's means the goal is out of order; [`TrecOrder::push`] then returns
//! [`OutOfOrder`] and the caller re-reads that goal and sorts it whole with [`trec_cmp`]. Memory is
//! the longest tie run, or the goal being repaired, never the file.

use std::cmp::Ordering;

/// trec_eval's order: `Less` when `(a_score, a_name)` ranks before `(b_score, b_name)`.
#[inline]
pub fn trec_cmp(a_score: f64, a_name: &[u8], b_score: f64, b_name: &[u8]) -> Ordering {
    // Scores are finite (callers reject NaN); -0.0 and 0.0 tie, as in C.
    b_score
        .partial_cmp(&a_score)
        .unwrap_or(Ordering::Equal)
        .then_with(|| b_name.cmp(a_name))
}

/// The goal's items are not in score order; sort the goal whole.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OutOfOrder {
    /// 0-based position (within the goal) of the first item that ranks above its predecessor.
    pub position: u64,
}

/// Passes items through in score order, buffering only runs of tied scores, which it sorts with a
/// caller-given comparator when the run closes (trec_eval's: name descending). The items carry
/// whatever the caller needs (for example where the name lies in its own buffer): nothing is copied.
#[derive(Debug)]
pub struct TrecOrder<T> {
    run: Vec<T>,
    run_score: f64,
    seen: u64,
    longest_run: usize,
}

impl<T> Default for TrecOrder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TrecOrder<T> {
    /// An empty repairer.
    pub fn new() -> Self {
        TrecOrder {
            run: Vec::new(),
            run_score: f64::INFINITY,
            seen: 0,
            longest_run: 0,
        }
    }

    /// Forgets the current goal (after [`OutOfOrder`], or to start a goal afresh).
    pub fn reset(&mut self) {
        self.run.clear();
        self.run_score = f64::INFINITY;
        self.seen = 0;
    }

    /// The longest tie run buffered so far (for reports).
    pub fn longest_run(&self) -> usize {
        self.longest_run
    }

    /// Offers the next item. `tie` orders items of equal score (`Less`: the first ranks higher; a
    /// stable sort keeps arrival order for `Equal`); `emit(score, item)` receives items in order.
    #[inline(always)]
    pub fn push<C, F>(&mut self, score: f64, item: T, tie: C, emit: F) -> Result<(), OutOfOrder>
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        let vs_last = score
            .partial_cmp(&self.run_score)
            .unwrap_or(Ordering::Equal);
        self.push_cmp(vs_last, score, item, tie, emit)
    }

    /// [`TrecOrder::push`] for a caller that has already compared the item's score with the
    /// previous item's (`vs_last`: the new score against the last one; ignored for a goal's first
    /// item), for example as text without parsing it; `score` is only handed back to `emit`.
    #[inline(always)]
    pub fn push_cmp<C, F>(
        &mut self,
        vs_last: Ordering,
        score: f64,
        item: T,
        tie: C,
        emit: F,
    ) -> Result<(), OutOfOrder>
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        let position = self.seen;
        self.seen += 1;
        if !self.run.is_empty() {
            match vs_last {
                Ordering::Greater => return Err(OutOfOrder { position }),
                Ordering::Less => self.flush(tie, emit),
                Ordering::Equal => {}
            }
        }
        self.run_score = score;
        self.run.push(item);
        if self.run.len() > self.longest_run {
            self.longest_run = self.run.len();
        }
        Ok(())
    }

    /// [`TrecOrder::push_cmp`] that hands the previous item back instead of passing it to `emit`
    /// when it was alone in its tie run (the common case, no tie): `Ok(Some(previous))`, which
    /// the caller emits before anything it pushes later. A run of two or more still goes to
    /// `emit`. The single item is swapped in place: no buffer push or pop.
    #[inline(always)]
    pub fn push_cmp_take<C, F>(
        &mut self,
        vs_last: Ordering,
        score: f64,
        item: T,
        tie: C,
        emit: F,
    ) -> Result<Option<T>, OutOfOrder>
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        if self.run.len() == 1 && vs_last == Ordering::Less {
            self.seen += 1;
            self.run_score = score;
            return Ok(Some(std::mem::replace(&mut self.run[0], item)));
        }
        self.push_cmp(vs_last, score, item, tie, emit)
            .map(|()| None)
    }

    /// Emits what is still buffered (end of goal) and resets.
    pub fn finish<C, F>(&mut self, tie: C, emit: F)
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        self.flush(tie, emit);
        self.reset();
    }

    #[inline(always)]
    fn flush<C, F>(&mut self, tie: C, mut emit: F)
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        let score = self.run_score;
        if self.run.len() == 1 {
            // No tie (most runs): nothing to sort.
            if let Some(item) = self.run.pop() {
                emit(score, item);
            }
            return;
        }
        self.flush_ties(tie, emit);
    }

    /// [`TrecOrder::flush`] of a run of tied items: sorted by the tie rule, then emitted.
    #[inline(never)]
    fn flush_ties<C, F>(&mut self, tie: C, mut emit: F)
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(f64, T),
    {
        let score = self.run_score;
        self.run.sort_by(tie);
        for item in self.run.drain(..) {
            emit(score, item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(items: &[(f64, &str)]) -> Result<Vec<String>, OutOfOrder> {
        let mut o = TrecOrder::new();
        let mut out = Vec::new();
        let desc = |a: &&str, b: &&str| b.as_bytes().cmp(a.as_bytes());
        for &(s, n) in items {
            o.push(s, n, desc, |_, name: &str| out.push(name.to_string()))?;
        }
        o.finish(desc, |_, name: &str| out.push(name.to_string()));
        Ok(out)
    }

    /// [`order`] through `push_cmp_take`: single items handed back, tie runs emitted.
    fn order_take(items: &[(f64, &str)]) -> Result<Vec<String>, OutOfOrder> {
        let mut o = TrecOrder::new();
        let mut out = Vec::new();
        let desc = |a: &&str, b: &&str| b.as_bytes().cmp(a.as_bytes());
        let mut last = None;
        for &(s, n) in items {
            let vs_last = last.map_or(Ordering::Equal, |l: f64| s.partial_cmp(&l).unwrap());
            last = Some(s);
            let back = o.push_cmp_take(vs_last, s, n, desc, |_, name: &str| {
                out.push(name.to_string())
            })?;
            out.extend(back.map(str::to_string));
        }
        o.finish(desc, |_, name: &str| out.push(name.to_string()));
        Ok(out)
    }

    #[test]
    fn handing_back_single_items_keeps_the_order() {
        let cases: [&[(f64, &str)]; 5] = [
            &[(2.0, "a"), (1.0, "10"), (1.0, "9"), (1.0, "b"), (0.5, "z")],
            &[(3.0, "a"), (2.0, "b"), (1.0, "c")],
            &[(1.0, "a"), (1.0, "b"), (0.5, "c"), (0.5, "d"), (0.2, "e")],
            &[(1.0, "x")],
            &[(2.0, "a"), (1.0, "b"), (3.0, "c")],
        ];
        for c in cases {
            assert_eq!(order_take(c), order(c), "{c:?}");
        }
        assert_eq!(
            order_take(&[(3.0, "a"), (2.0, "b"), (1.0, "c")]).unwrap(),
            ["a", "b", "c"]
        );
        assert_eq!(order_take(cases[4]), Err(OutOfOrder { position: 2 }));
    }

    #[test]
    fn ties_break_by_name_descending_bytes() {
        // "9" > "10" as bytes, "b" > "a".
        let got = order(&[(2.0, "a"), (1.0, "10"), (1.0, "9"), (1.0, "b"), (0.5, "z")]).unwrap();
        assert_eq!(got, ["a", "b", "9", "10", "z"]);
        assert_eq!(trec_cmp(1.0, b"b", 1.0, b"a"), Ordering::Less);
        assert_eq!(trec_cmp(2.0, b"a", 1.0, b"z"), Ordering::Less);
    }

    #[test]
    fn a_higher_score_later_is_out_of_order() {
        assert_eq!(
            order(&[(2.0, "a"), (1.0, "b"), (3.0, "c")]),
            Err(OutOfOrder { position: 2 })
        );
    }
}
