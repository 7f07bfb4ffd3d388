//! Ranking order (METRICS.md §2) without I/O: trec_eval's comparator and a tie-run repairer.
//!
//! trec_eval ranks by score descending and breaks equal scores by lemma name in *descending* byte
//! order (`strcmp`: "b" before "a", "9" before "10"). Input that already arrives in that order
//! should not be sorted: [`TrecOrder`] passes items through as soon as their position is certain,
//! buffering only a run of equal scores (sorted by name when it closes). An item whose score is
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

/// Passes items through in trec order, buffering only runs of tied scores. See the module docs.
#[derive(Debug)]
pub struct TrecOrder<T> {
    run: Vec<(usize, usize, T)>,
    names: Vec<u8>,
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
            names: Vec::new(),
            run_score: f64::INFINITY,
            seen: 0,
            longest_run: 0,
        }
    }

    /// Forgets the current goal (after [`OutOfOrder`], or to start a goal afresh).
    pub fn reset(&mut self) {
        self.run.clear();
        self.names.clear();
        self.run_score = f64::INFINITY;
        self.seen = 0;
    }

    /// The longest tie run buffered so far (for reports).
    pub fn longest_run(&self) -> usize {
        self.longest_run
    }

    /// Offers the next item; `emit(score, name, item)` receives items in trec order.
    pub fn push<F: FnMut(f64, &[u8], T)>(
        &mut self,
        score: f64,
        name: &[u8],
        item: T,
        emit: F,
    ) -> Result<(), OutOfOrder> {
        let position = self.seen;
        self.seen += 1;
        if !self.run.is_empty() {
            match score
                .partial_cmp(&self.run_score)
                .unwrap_or(Ordering::Equal)
            {
                Ordering::Greater => return Err(OutOfOrder { position }),
                Ordering::Less => self.flush(emit),
                Ordering::Equal => {}
            }
        }
        self.run_score = score;
        let start = self.names.len();
        self.names.extend_from_slice(name);
        self.run.push((start, self.names.len(), item));
        self.longest_run = self.longest_run.max(self.run.len());
        Ok(())
    }

    /// Emits what is still buffered (end of goal) and resets.
    pub fn finish<F: FnMut(f64, &[u8], T)>(&mut self, emit: F) {
        self.flush(emit);
        self.reset();
    }

    fn flush<F: FnMut(f64, &[u8], T)>(&mut self, mut emit: F) {
        if self.run.len() > 1 {
            let names = &self.names;
            self.run
                .sort_by(|a, b| names[b.0..b.1].cmp(&names[a.0..a.1]));
        }
        let score = self.run_score;
        for (s, e, item) in self.run.drain(..) {
            emit(score, &self.names[s..e], item);
        }
        self.names.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(items: &[(f64, &str)]) -> Result<Vec<String>, OutOfOrder> {
        let mut o = TrecOrder::new();
        let mut out = Vec::new();
        for &(s, n) in items {
            o.push(s, n.as_bytes(), (), |_, name, ()| {
                out.push(String::from_utf8(name.to_vec()).unwrap())
            })?;
        }
        o.finish(|_, name, ()| out.push(String::from_utf8(name.to_vec()).unwrap()));
        Ok(out)
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
