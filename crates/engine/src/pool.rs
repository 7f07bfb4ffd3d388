//! What the worker pools of the text and full-library pipelines share: a window that keeps
//! producers at most a few units ahead of the in-order consumer.

/// Keeps producers at most `ahead` units in front of the in-order consumer, so that results
/// finished out of order (behind one slow batch) cannot pile up without bound.
pub(crate) struct Window {
    /// Units the consumer has taken, and whether the window is closed.
    state: std::sync::Mutex<(u64, bool)>,
    moved: std::sync::Condvar,
    ahead: u64,
}

impl Window {
    pub(crate) fn new(ahead: u64) -> Self {
        Window {
            state: std::sync::Mutex::new((0, false)),
            moved: std::sync::Condvar::new(),
            ahead,
        }
    }

    /// Blocks until unit `index` may start (or the window is closed).
    pub(crate) fn wait_for(&self, index: u64) {
        let mut state = self.state.lock().expect("window");
        while index >= state.0 + self.ahead && !state.1 {
            state = self.moved.wait(state).expect("window");
        }
    }

    /// The consumer has taken every unit below `done`.
    pub(crate) fn advance(&self, done: u64) {
        self.state.lock().expect("window").0 = done;
        self.moved.notify_all();
    }

    /// Lets every waiting producer go (end of work, or an error).
    pub(crate) fn close(&self) {
        self.state.lock().expect("window").1 = true;
        self.moved.notify_all();
    }
}

/// Closes a window when dropped: on every exit path of a collector, a panic included, producers
/// waiting on the window are let go.
pub(crate) struct CloseOnDrop<'a>(pub(crate) &'a Window);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}
