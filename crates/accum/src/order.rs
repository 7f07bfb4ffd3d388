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
/// The caller compares each score with the previous one (parsed scores with `partial_cmp`, or
/// score texts), so the repairer holds no score.
#[derive(Debug)]
pub struct TrecOrder<T> {
    run: Vec<T>,
    seen: u64,
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
            seen: 0,
        }
    }

    /// Forgets the current goal (after [`OutOfOrder`], or to start a goal afresh).
    pub fn reset(&mut self) {
        self.run.clear();
        self.seen = 0;
    }

    /// Offers the next item; `vs_last` is its score against the previous item's (ignored for a
    /// goal's first item).
    ///
    /// - `Ok(Some(previous))`: the previous item was alone at its score, so its rank is now
    ///   certain; the caller emits it, before anything it pushes later. This is the common case
    ///   (no tie), [`TrecOrder::replace_lone`], which a caller's fast path may also try alone: a
    ///   swap in place, no buffer push or pop, no call of `emit`.
    /// - `Ok(None)`: held. A run of two or more tied items, when a lower score closes it, is
    ///   sorted by `tie` (`Less`: the first ranks higher; a stable sort keeps arrival order for
    ///   `Equal`) and handed to `emit` in order.
    /// - `Err(OutOfOrder)`: the score is higher than the previous one.
    #[inline(always)]
    pub fn push<C, F>(
        &mut self,
        vs_last: Ordering,
        item: T,
        tie: C,
        emit: F,
    ) -> Result<Option<T>, OutOfOrder>
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(T),
    {
        let item = match self.replace_lone(vs_last, item) {
            Ok(previous) => return Ok(Some(previous)),
            Err(item) => item,
        };
        let position = self.seen;
        self.seen += 1;
        if self.run.is_empty() {
            self.run.push(item);
            return Ok(None);
        }
        match vs_last {
            Ordering::Greater => Err(OutOfOrder { position }),
            Ordering::Equal => {
                self.run.push(item);
                Ok(None)
            }
            Ordering::Less => {
                self.flush(tie, emit);
                self.run.push(item);
                Ok(None)
            }
        }
    }

    /// The common case of [`TrecOrder::push`] on its own: `item` scores below the previous item,
    /// which is held alone, so they swap and the previous item comes back (`Ok`): its rank is
    /// certain. `Err(item)`: any other case, nothing changed, for [`TrecOrder::push`].
    #[inline(always)]
    pub fn replace_lone(&mut self, vs_last: Ordering, item: T) -> Result<T, T> {
        match self.run.as_mut_slice() {
            [lone] if vs_last == Ordering::Less => {
                self.seen += 1;
                Ok(std::mem::replace(lone, item))
            }
            _ => Err(item),
        }
    }

    /// Emits what is still buffered (end of goal) and resets.
    pub fn finish<C, F>(&mut self, tie: C, emit: F)
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(T),
    {
        self.flush(tie, emit);
        self.reset();
    }

    /// Sorts the buffered run by the tie rule and emits it (out of line: ties are rare).
    #[inline(never)]
    fn flush<C, F>(&mut self, tie: C, mut emit: F)
    where
        C: FnMut(&T, &T) -> Ordering,
        F: FnMut(T),
    {
        self.run.sort_by(tie);
        for item in self.run.drain(..) {
            emit(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of `items` (score, name) through the repairer: scores compared as floats,
    /// items handed back or emitted.
    fn order(items: &[(f64, &str)]) -> Result<Vec<String>, OutOfOrder> {
        order_with(items, false)
    }

    /// [`order`], with the fast path ([`TrecOrder::replace_lone`]) tried first when `fast`, as
    /// the engine does.
    fn order_with(items: &[(f64, &str)], fast: bool) -> Result<Vec<String>, OutOfOrder> {
        let mut o = TrecOrder::new();
        let mut out = Vec::new();
        let desc = |a: &&str, b: &&str| b.as_bytes().cmp(a.as_bytes());
        let mut last = None;
        for &(s, n) in items {
            let vs_last = last.map_or(Ordering::Equal, |l: f64| s.partial_cmp(&l).unwrap());
            last = Some(s);
            let n = if fast {
                o.replace_lone(vs_last, n)
            } else {
                Err(n)
            };
            match n {
                Ok(previous) => out.push(previous.to_string()),
                Err(n) => {
                    let back = o.push(vs_last, n, desc, |name: &str| out.push(name.to_string()))?;
                    out.extend(back.map(str::to_string));
                }
            }
        }
        o.finish(desc, |name: &str| out.push(name.to_string()));
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
    fn single_items_handed_back_and_tie_runs_emitted_keep_the_order() {
        type Case<'a> = (&'a [(f64, &'a str)], &'a [&'a str]);
        let cases: [Case; 4] = [
            (&[(3.0, "a"), (2.0, "b"), (1.0, "c")], &["a", "b", "c"]),
            (
                &[(1.0, "a"), (1.0, "b"), (0.5, "c"), (0.5, "d"), (0.2, "e")],
                &["b", "a", "d", "c", "e"],
            ),
            (&[(1.0, "x")], &["x"]),
            (&[(2.0, "a"), (1.0, "b"), (1.0, "c")], &["a", "c", "b"]),
        ];
        for (items, want) in cases {
            assert_eq!(order(items).unwrap(), want, "{items:?}");
        }
    }

    #[test]
    fn the_fast_path_orders_as_push_alone() {
        let cases: [&[(f64, &str)]; 6] = [
            &[(3.0, "a"), (2.0, "b"), (1.0, "c")],
            &[(1.0, "a"), (1.0, "b"), (0.5, "c"), (0.5, "d"), (0.2, "e")],
            &[(1.0, "x")],
            &[(2.0, "a"), (1.0, "b"), (1.0, "c"), (0.5, "d"), (0.4, "e")],
            &[(2.0, "a"), (1.0, "b"), (3.0, "c")],
            &[(2.0, "a"), (2.0, "b"), (1.0, "c"), (4.0, "d")],
        ];
        for items in cases {
            assert_eq!(order_with(items, true), order(items), "{items:?}");
        }
        // A lone item is swapped for a lower one; a tie or a higher score is refused.
        let mut o = TrecOrder::new();
        assert_eq!(o.replace_lone(Ordering::Equal, "a"), Err("a"));
        assert_eq!(
            o.push(Ordering::Equal, "a", |_, _| Ordering::Equal, |_| {}),
            Ok(None)
        );
        assert_eq!(o.replace_lone(Ordering::Less, "b"), Ok("a"));
        assert_eq!(o.replace_lone(Ordering::Equal, "c"), Err("c"));
        assert_eq!(o.replace_lone(Ordering::Greater, "c"), Err("c"));
        assert_eq!(
            o.push(Ordering::Greater, "c", |_, _| Ordering::Equal, |_| {}),
            Err(OutOfOrder { position: 2 })
        );
    }

    #[test]
    fn a_higher_score_later_is_out_of_order() {
        assert_eq!(
            order(&[(2.0, "a"), (1.0, "b"), (3.0, "c")]),
            Err(OutOfOrder { position: 2 })
        );
    }
}
