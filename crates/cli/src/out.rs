//! Where the command's outputs go and how its errors end it: exit codes, outputs refused before
//! anything is read (an input's path, two outputs on stdout), outputs committed as one set, a
//! closed pipe, a progress bar.

use lemma_eval::EvalError;
use lemma_outfile::{Output, OutputError, OutputStep};
use std::io::{IsTerminal, Write};
use std::path::Path;

/// An error and its exit code.
pub(crate) struct Fail(pub(crate) u8, pub(crate) String);

impl From<EvalError> for Fail {
    fn from(e: EvalError) -> Self {
        Fail(2, e.to_string())
    }
}

/// An output's error: a write's is [`write_fail`]'s (a closed pipe may end the command quietly).
impl From<OutputError> for Fail {
    fn from(e: OutputError) -> Self {
        match e.step {
            OutputStep::Write => write_fail(&e.name, e.error),
            _ => Fail(2, e.to_string()),
        }
    }
}

impl From<lemma_ingest::InputError> for Fail {
    fn from(e: lemma_ingest::InputError) -> Self {
        Fail(2, e.to_string())
    }
}

/// A memory-mapped input cut short while it is read (a sorted qrels file read along the
/// predictions, a run read with `--mmap`, a store or a matrix, truncated by another process)
/// raises SIGBUS when a page past its new end is touched: reported as an error naming the file
/// (the mapping that holds the faulting address, [`lemma_ingest::describe_fault`]) with exit 2
/// instead of a crash. An `-o` file is an unnamed temporary file until it is committed, so nothing
/// partial is left.
pub(crate) fn report_bus_errors() {
    extern "C" fn on_bus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        const HEAD: &[u8] = b"lemma-eval: error: ";
        const NAMED: &[u8] = b": changed while it was read (cut short under its memory mapping: \
            SIGBUS); the evaluation stopped and no -o file was written\n";
        const UNNAMED: &[u8] = b"an input file was cut short while it was read (a memory-mapped \
            page past its new end: SIGBUS); the evaluation stopped and no -o file was written\n";
        let mut name = [0u8; 512];
        // SAFETY: the kernel's siginfo for this signal; si_addr is meaningful only for a fault
        // the kernel raised (si_code > 0), not for one sent by kill.
        let n = unsafe {
            match info.as_ref() {
                Some(i) if i.si_code > 0 => {
                    lemma_ingest::describe_fault(i.si_addr() as usize, &mut name)
                }
                _ => 0,
            }
        };
        // SAFETY: write and _exit are async-signal-safe; describe_fault only loads atomics and
        // copies bytes; the buffers are static or on this stack.
        unsafe {
            libc::write(2, HEAD.as_ptr().cast(), HEAD.len());
            if n > 0 {
                libc::write(2, name.as_ptr().cast(), n);
                libc::write(2, NAMED.as_ptr().cast(), NAMED.len());
            } else {
                libc::write(2, UNNAMED.as_ptr().cast(), UNNAMED.len());
            }
            libc::_exit(2);
        }
    }
    // SAFETY: a zeroed sigaction is valid; the handler calls only async-signal-safe functions.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction =
            on_bus as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

/// Refuses outputs that name an input's file or each other's ([`lemma_outfile::check_distinct`]):
/// exit 2 before anything is read. Outputs given as `-` are stdout ([`one_stdout`]).
pub(crate) fn distinct(outputs: &[Option<&Path>], inputs: &[&Path]) -> Result<(), Fail> {
    let outputs: Vec<&Path> = (outputs.iter().flatten().copied())
        .filter(|p| !is_dash(p))
        .collect();
    lemma_outfile::check_distinct(&outputs, inputs).map_err(|e| Fail(2, e.to_string()))
}

/// An output path `-`: stdout.
pub(crate) fn is_dash(p: &Path) -> bool {
    p == Path::new("-")
}

/// What [`one_stdout`] calls the `-o` output: `-o -`, or the table when `-o` is left out.
pub(crate) fn table_label(output: Option<&Path>) -> &'static str {
    match output {
        None => "the output (no -o)",
        Some(_) => "-o -",
    }
}

/// Refuses two outputs to stdout: `outputs` are each output's option and whether it goes there.
pub(crate) fn one_stdout(outputs: &[(&str, bool)]) -> Result<(), Fail> {
    let there: Vec<&str> = (outputs.iter()).filter(|o| o.1).map(|o| o.0).collect();
    match there[..] {
        [a, b, ..] => Err(Fail(
            2,
            format!("{a} and {b} would both write to stdout: give one of them a file"),
        )),
        _ => Ok(()),
    }
}

/// Commits a command's outputs as one set ([`lemma_outfile::commit_outputs`]): stdout flushed,
/// the files' last bytes written, then the files committed together. Any failure before the
/// renames leaves every file as it was.
pub(crate) fn commit_all(outs: impl IntoIterator<Item = Output>) -> Result<(), Fail> {
    lemma_outfile::commit_outputs(outs).map_err(Fail::from)
}

/// An evaluation's error; the row sink's errors are the output's ([`write_fail`]).
pub(crate) fn eval_fail(out: &str, e: EvalError) -> Fail {
    match e {
        EvalError::Sink(e) => write_fail(out, e),
        e => Fail::from(e),
    }
}

/// A writer that keeps the first error it returned.
pub(crate) struct WriteErrors<'a> {
    pub(crate) inner: &'a mut dyn Write,
    pub(crate) error: Option<std::io::Error>,
}

impl WriteErrors<'_> {
    fn keep<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        r.map_err(|e| {
            let copy = std::io::Error::new(e.kind(), e.to_string());
            self.error.get_or_insert(e);
            copy
        })
    }
}

impl Write for WriteErrors<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.keep(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.keep(r)
    }
}

/// An error of a write to several outputs (`writers`, named by the first of `names`): the one
/// whose writer failed is named, or else all `names` (an error of none of them: a store's).
pub(crate) fn which_failed(
    writers: &mut [WriteErrors],
    names: &[String],
    e: std::io::Error,
) -> Fail {
    match (writers.iter_mut().zip(names)).find_map(|(w, n)| Some((n, w.error.take()?))) {
        Some((name, e)) => write_fail(name, e),
        None => write_fail(&names.join(", "), e),
    }
}

/// A failed write to an output: an error naming the output (a full disk: exit 2). A closed pipe
/// (`... | head`) is `Fail(0, ..)`: when it is the command's only output the run ends quietly
/// with exit 0, as `cat` and ripgrep end ([`one_output`]); otherwise it is an error (exit 2),
/// and the command's other outputs, dropped uncommitted, are not written.
pub(crate) fn write_fail(name: &str, e: std::io::Error) -> Fail {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Fail(
            0,
            format!("{name}: cannot write: {e}: its reader has gone; no output file was written"),
        )
    } else {
        Fail(2, format!("{name}: cannot write: {e}"))
    }
}

pub(crate) fn progress_bar(quiet: bool, size: Option<u64>) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let size = size.filter(|&s| s >= 64 << 20)?;
    let pb = indicatif::ProgressBar::new(size);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(pb)
}
