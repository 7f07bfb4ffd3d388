//! Parameter lists a [`crate::Measure`] carries (`11pt_avg`'s recall levels, `ndcg`'s gains):
//! each list is interned once, so the measure stays `Copy` and compares by the list's contents.

use std::fmt;
use std::sync::Mutex;

/// Recall levels, in the order given (trec_eval's `11pt_avg.0.2,0.5,0.8`).
#[derive(Copy, Clone)]
pub struct Levels(&'static [f64]);

/// Gains of relevance grades, `(grade, gain)` in the order given (trec_eval's `ndcg.1=3,2=9`).
#[derive(Copy, Clone)]
pub struct Gains(&'static [(i64, f64)]);

static LEVELS: Mutex<Vec<&'static [f64]>> = Mutex::new(Vec::new());
static GAINS: Mutex<Vec<&'static [(i64, f64)]>> = Mutex::new(Vec::new());

/// The interned copy of `v` (equal bit for bit), leaked once per distinct list.
fn intern<T: Copy + PartialEq + 'static>(
    pool: &Mutex<Vec<&'static [T]>>,
    v: &[T],
    same: fn(&T, &T) -> bool,
) -> &'static [T] {
    let mut pool = pool.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = pool
        .iter()
        .find(|p| p.len() == v.len() && p.iter().zip(v).all(|(a, b)| same(a, b)))
    {
        return found;
    }
    let leaked: &'static [T] = Box::leak(v.to_vec().into_boxed_slice());
    pool.push(leaked);
    leaked
}

impl Levels {
    /// The list `v` (any order, repeats kept).
    pub fn new(v: &[f64]) -> Levels {
        Levels(intern(&LEVELS, v, |a, b| a.to_bits() == b.to_bits()))
    }

    /// The levels.
    pub fn get(&self) -> &'static [f64] {
        self.0
    }
}

impl Gains {
    /// The list `v` of `(grade, gain)`, in the order given.
    pub fn new(v: &[(i64, f64)]) -> Gains {
        Gains(intern(&GAINS, v, |a, b| {
            a.0 == b.0 && a.1.to_bits() == b.1.to_bits()
        }))
    }

    /// The pairs.
    pub fn get(&self) -> &'static [(i64, f64)] {
        self.0
    }
}

impl PartialEq for Levels {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl PartialEq for Gains {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl fmt::Debug for Levels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0).finish()
    }
}

impl fmt::Debug for Gains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0).finish()
    }
}

impl fmt::Display for Levels {
    /// `0.25/0.5/0.75`, as the native names write them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, x) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            write!(f, "{x}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Gains {
    /// `1:3/2:9`, as the native names write them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (g, x)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            write!(f, "{g}:{x}")?;
        }
        Ok(())
    }
}
