//! Where per-goal rows go: a [`Sink`] the evaluation calls on the caller's thread, in order.

use crate::GoalRow;
use std::io;

/// Receives each evaluated goal's row, in order: goals with predictions in input order (file order
/// for text, goal order for stores and matrices), then the goals the predictions never ranked, in
/// actual-set order. An error stops the evaluation and is returned as
/// [`EvalError::Sink`](crate::EvalError::Sink).
///
/// ```
/// use lemma_eval::{GoalRow, Sink};
/// /// Keeps the goals whose AP (the first measure) is below one half.
/// struct Hard(Vec<Vec<u8>>);
/// impl Sink for Hard {
///     fn row(&mut self, row: GoalRow) -> std::io::Result<()> {
///         if row.values[0].unwrap_or(0.0) < 0.5 {
///             self.0.push(row.goal);
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait Sink {
    /// Whether rows are wanted at all: when `false`, none are built (the summary alone costs
    /// less). Asked once, before the evaluation starts.
    fn wants_rows(&self) -> bool {
        true
    }

    /// One goal's row.
    fn row(&mut self, row: GoalRow) -> io::Result<()>;
}

/// The summary alone: no per-goal rows are built.
#[derive(Copy, Clone, Debug, Default)]
pub struct SummaryOnly;

impl Sink for SummaryOnly {
    fn wants_rows(&self) -> bool {
        false
    }

    fn row(&mut self, _: GoalRow) -> io::Result<()> {
        Ok(())
    }
}

/// Rows collected in memory (one per goal: mind the goal count).
impl Sink for Vec<GoalRow> {
    fn row(&mut self, row: GoalRow) -> io::Result<()> {
        self.push(row);
        Ok(())
    }
}

/// A closure as a sink: `RowFn(|row| { ...; Ok(()) })`.
pub struct RowFn<F>(pub F);

impl<F: FnMut(GoalRow) -> io::Result<()>> Sink for RowFn<F> {
    fn row(&mut self, row: GoalRow) -> io::Result<()> {
        (self.0)(row)
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn wants_rows(&self) -> bool {
        (**self).wants_rows()
    }

    fn row(&mut self, row: GoalRow) -> io::Result<()> {
        (**self).row(row)
    }
}
