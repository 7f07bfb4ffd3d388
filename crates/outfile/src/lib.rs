//! # lemma-outfile: write an output file without ever destroying one
//!
//! Every file lemma-eval writes (reports, `-o`, stores, summaries, generated workloads) goes
//! through [`OutFile`]. What happens depends on what the path names when it is opened:
//!
//! | the path names | what [`OutFile`] does |
//! |---|---|
//! | nothing | a new regular file with mode `0666` less the umask (as a shell's `>` makes), visible only once [`OutFile::commit`] succeeds |
//! | a regular file | replaced atomically at commit (data synced, then renamed over it, then the directory synced); its mode and, where allowed, its owner are kept; until the commit every reader sees the old content |
//! | a symbolic link (or a chain of them) | followed: its final target is treated as above and the link itself is kept; a dangling link's target is created |
//! | a character or block device, a FIFO | opened for writing in place: never truncated, replaced or renamed (`/dev/null`, `/dev/full`, a named pipe) |
//! | this process's own descriptor (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`) | that descriptor, duplicated: the bytes go where it goes, at its offset and with its flags (an appending `>>` keeps appending) |
//! | a directory or a socket | an error |
//!
//! An [`OutFile`] dropped without a commit (an error, a panic) leaves nothing behind: on Linux the
//! temporary file is opened with `O_TMPFILE` and has no name while it is written and synced, so
//! even a process killed then leaves no trace; on file systems without `O_TMPFILE` it is a hidden
//! sibling (`.NAME.XXXXXX`) removed on drop. Every write, flush, sync and rename error is
//! returned: a full disk is an error, never a short file. Replacing a regular file gives it a new
//! inode, so other hard links to the old one keep the old content.
//!
//! ## Several outputs as one set
//!
//! [`commit_all`] commits a command's outputs together, only once every one of them has been
//! written in full: first the files written in place are flushed, then every temporary is synced
//! while it has no name, then each is given a hidden name beside its target, and only then are
//! they renamed over their targets, back to back, in the order given. An error before the first
//! rename (a full disk, a closed pipe written in place) leaves every target as it was and no
//! temporary behind. The renames are separate system calls, not one atomic step: a process
//! killed by SIGKILL (or a machine that stops) between two of them leaves the earlier targets new
//! and the later ones old, and the later ones' hidden names behind. [`remove_temporaries_on_signals`]
//! closes that window to SIGHUP, SIGINT and SIGTERM: they wait for the renames to end, and remove
//! hidden names that are left.
//!
//! ```
//! use std::io::Write;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("report.tsv");
//! let mut out = lemma_outfile::OutFile::create(&path)?;
//! out.write_all(b"goal\tmeasure\tvalue\n")?;
//! assert!(!path.exists()); // nothing under the name before the commit
//! out.commit()?;
//! assert_eq!(std::fs::read(&path)?, b"goal\tmeasure\tvalue\n");
//! # Ok::<(), std::io::Error>(())
//! ```

#![deny(missing_docs)]

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::path::{Component, Path, PathBuf};

mod signals;
mod temp;

pub use signals::remove_temporaries_on_signals;

/// Symbolic links followed before giving up, as the kernel's own limit (`ELOOP`).
const MAX_LINKS: usize = 40;

/// An output file: see the [crate documentation](crate) for what happens to each kind of path.
///
/// Unbuffered (wrap it in a [`std::io::BufWriter`] and call `into_inner` before [`commit`]);
/// seekable when the target is a regular file.
///
/// [`commit`]: OutFile::commit
#[derive(Debug)]
pub struct OutFile {
    target: Target,
    path: PathBuf,
}

#[derive(Debug)]
enum Target {
    /// A temporary file renamed over the path at commit.
    Replace(temp::Temp),
    /// A device, FIFO or descriptor written where it is.
    InPlace(File),
}

/// What a path names once its symbolic links are followed.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// A regular file or nothing: written atomically at this (link-free) path.
    Replace(PathBuf),
    /// A device or FIFO: opened for writing at this path.
    InPlace(PathBuf),
    /// A descriptor of this process (`/proc/self/fd/N` and its aliases).
    OwnDescriptor(RawFd),
}

impl OutFile {
    /// Opens `path` for writing as the [crate documentation](crate) describes. The error names
    /// nothing but the cause; callers add the path.
    pub fn create(path: impl AsRef<Path>) -> io::Result<OutFile> {
        let path = path.as_ref();
        let target = match resolve(path)? {
            Resolved::Replace(real) => Target::Replace(temp::Temp::create(&real)?),
            Resolved::InPlace(p) => Target::InPlace(File::options().write(true).open(p)?),
            Resolved::OwnDescriptor(fd) => Target::InPlace(duplicate(fd)?),
        };
        Ok(OutFile {
            target,
            path: path.to_path_buf(),
        })
    }

    /// The path given to [`OutFile::create`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the commit replaces a file by renaming (`false`: the bytes are already where they
    /// go, as for a device, a FIFO or a descriptor).
    pub fn is_atomic(&self) -> bool {
        matches!(self.target, Target::Replace(_))
    }

    /// Makes the written bytes the file's content: for a regular file, syncs the temporary file
    /// and renames it over the target (and syncs the directory); for a device, FIFO or
    /// descriptor there is nothing left to do but to report success, as its bytes were written in
    /// place. The same as [`commit_all`] of this file alone.
    pub fn commit(self) -> io::Result<()> {
        commit_all([self]).map_err(CommitError::into_error)
    }

    /// Gives up: a temporary file is removed and the target left as it was (bytes already written
    /// to a device, FIFO or descriptor cannot be taken back). Dropping does the same.
    pub fn discard(self) -> io::Result<()> {
        drop(self);
        Ok(())
    }
}

/// What [`commit_all`] did when it failed: which output, at which step, and which outputs were
/// already replaced (none unless a rename failed after others succeeded, or a directory could
/// not be synced after the renames).
#[derive(Debug)]
pub struct CommitError {
    path: PathBuf,
    error: io::Error,
    step: Step,
    replaced: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Write,
    Rename,
    SyncDirectory,
}

impl CommitError {
    /// The output that failed, as given to [`OutFile::create`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The outputs already replaced when it failed, in the order given.
    pub fn replaced(&self) -> &[PathBuf] {
        &self.replaced
    }

    /// The error, without the path.
    pub fn into_error(self) -> io::Error {
        self.error
    }
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match self.step {
            Step::Write => write!(f, "{path}: cannot write: {}", self.error)?,
            Step::Rename => write!(f, "{path}: cannot replace it: {}", self.error)?,
            Step::SyncDirectory => write!(
                f,
                "{path}: replaced, but its directory could not be synced: {}",
                self.error
            )?,
        }
        let others: Vec<String> = (self.replaced.iter())
            .filter(|p| **p != self.path)
            .map(|p| p.display().to_string())
            .collect();
        if !others.is_empty() && self.step == Step::Rename {
            write!(f, " (already replaced: {})", others.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for CommitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Commits `files` as one set (see the [crate documentation](crate#several-outputs-as-one-set)):
/// the files written in place are flushed, every temporary file is synced, then given a hidden
/// name, then all are renamed over their targets back to back in the order given, and the
/// directories synced. Any error before the renames leaves every target as it was and no
/// temporary behind; the [`CommitError`] names the file and says what was already replaced.
pub fn commit_all(files: impl IntoIterator<Item = OutFile>) -> Result<(), CommitError> {
    let mut files: Vec<OutFile> = files.into_iter().collect();
    let fail = |f: &OutFile, step: Step, error: io::Error, replaced: &[PathBuf]| CommitError {
        path: f.path.clone(),
        error,
        step,
        replaced: replaced.to_vec(),
    };
    // What is written in place first (a pipe may block): nothing gets a name before it is done.
    for f in &mut files {
        if let Target::InPlace(w) = &mut f.target {
            if let Err(e) = w.flush() {
                return Err(fail(f, Step::Write, e, &[]));
            }
        }
    }
    // The long part, while the temporaries have no name: a kill leaves nothing.
    for f in &mut files {
        if let Target::Replace(t) = &mut f.target {
            if let Err(e) = t.file.sync_all() {
                return Err(fail(f, Step::Write, e, &[]));
            }
        }
    }
    for f in &mut files {
        if let Target::Replace(t) = &mut f.target {
            if let Err(e) = t.link() {
                return Err(fail(f, Step::Write, e, &[]));
            }
        }
    }
    let mut replaced = Vec::new();
    let mut failed = None;
    {
        // Locked: a signal waits for the last rename (remove_temporaries_on_signals).
        let mut named = temp::named();
        for (i, f) in files.iter_mut().enumerate() {
            if let Target::Replace(t) = &mut f.target {
                match t.rename(&mut named) {
                    Ok(()) => replaced.push(f.path.clone()),
                    Err(e) => {
                        failed = Some((i, e));
                        break;
                    }
                }
            }
        }
    }
    if let Some((i, e)) = failed {
        return Err(fail(&files[i], Step::Rename, e, &replaced));
    }
    for f in &files {
        if let Target::Replace(t) = &f.target {
            if let Err(e) = t.sync_dir() {
                return Err(fail(f, Step::SyncDirectory, e, &replaced));
            }
        }
    }
    Ok(())
}

/// Where one of a command's outputs goes: stdout (no path, or `-`) or an [`OutFile`], buffered
/// (64 KiB). A command's outputs are committed together by [`commit_outputs`]: stdout flushed,
/// the files as one set ([`commit_all`]).
pub enum Output {
    /// The process's standard output.
    Stdout(io::BufWriter<io::Stdout>),
    /// A file, committed with the others.
    File(io::BufWriter<OutFile>),
}

/// What a failed [`Output`] operation names: the output ("stdout" or the path) and the error.
#[derive(Debug)]
pub struct OutputError {
    /// The output: `stdout` or its path.
    pub name: String,
    /// What failed.
    pub error: io::Error,
    /// The step: creating the output, writing to it, or committing the set.
    pub step: OutputStep,
}

/// The step of an [`OutputError`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OutputStep {
    /// [`Output::create`]: the file could not be created.
    Create,
    /// A write or a flush.
    Write,
    /// [`commit_all`]: the error is the [`CommitError`]'s message.
    Commit,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            OutputStep::Create => {
                write!(
                    f,
                    "{}: cannot create the output file: {}",
                    self.name, self.error
                )
            }
            OutputStep::Write => write!(f, "{}: cannot write: {}", self.name, self.error),
            OutputStep::Commit => write!(f, "{}", self.error),
        }
    }
}

impl std::error::Error for OutputError {}

impl Output {
    /// Stdout for `None` or `-`, else an [`OutFile`] at `path`.
    pub fn create(path: Option<&Path>) -> Result<Output, OutputError> {
        match path {
            Some(p) if p != Path::new("-") => {
                let f = OutFile::create(p).map_err(|error| OutputError {
                    name: p.display().to_string(),
                    error,
                    step: OutputStep::Create,
                })?;
                Ok(Output::File(io::BufWriter::with_capacity(1 << 16, f)))
            }
            _ => Ok(Output::Stdout(io::BufWriter::with_capacity(
                1 << 16,
                io::stdout(),
            ))),
        }
    }

    /// What an error message calls this output: `stdout` or the file's path.
    pub fn name(&self) -> String {
        match self {
            Output::Stdout(_) => "stdout".into(),
            Output::File(w) => w.get_ref().path().display().to_string(),
        }
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(w) => w,
            Output::File(w) => w,
        }
    }

    /// A write error of this output, named.
    pub fn write_error(&self, error: io::Error) -> OutputError {
        OutputError {
            name: self.name(),
            error,
            step: OutputStep::Write,
        }
    }
}

/// Commits a command's outputs as one set, in the order given: every output's last bytes are
/// written (stdout flushed, the files' buffers emptied into their temporary files) and only then
/// are the files committed together ([`commit_all`]). Any failure before the renames leaves
/// every file as it was.
pub fn commit_outputs(outputs: impl IntoIterator<Item = Output>) -> Result<(), OutputError> {
    let mut files = Vec::new();
    for out in outputs {
        let name = out.name();
        let write = |error| OutputError {
            name: name.clone(),
            error,
            step: OutputStep::Write,
        };
        match out {
            Output::Stdout(mut w) => w.flush().map_err(write)?,
            Output::File(w) => files.push(w.into_inner().map_err(|e| write(e.into_error()))?),
        }
    }
    commit_all(files).map_err(|e| OutputError {
        name: e.path().display().to_string(),
        error: io::Error::other(e.to_string()),
        step: OutputStep::Commit,
    })
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Replace(t) => t.file.write(buf),
            Target::InPlace(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.target {
            Target::Replace(t) => t.file.write_all(buf),
            Target::InPlace(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Replace(t) => t.file.flush(),
            Target::InPlace(f) => f.flush(),
        }
    }
}

impl Seek for OutFile {
    /// Seeks the temporary file; a device, FIFO or descriptor seeks if it can (a pipe cannot:
    /// `ESPIPE`).
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.target {
            Target::Replace(t) => t.file.seek(pos),
            Target::InPlace(f) => f.seek(pos),
        }
    }
}

/// Follows `path`'s symbolic links to what it names.
fn resolve(path: &Path) -> io::Result<Resolved> {
    if path.as_os_str().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an empty path names no file",
        ));
    }
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Resolved::Replace(p)),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if let Some(fd) = descriptor_link(&p) {
                return Ok(match fd {
                    Descriptor::Own(fd) => Resolved::OwnDescriptor(fd),
                    // Another process's descriptor: opening the magic link reaches its file.
                    Descriptor::Other => Resolved::InPlace(p),
                });
            }
            let link = std::fs::read_link(&p)?;
            p = match p.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(Resolved::Replace(p));
        }
        if kind.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            ));
        }
        use std::os::unix::fs::FileTypeExt;
        if kind.is_socket() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a socket, which cannot be opened as a file",
            ));
        }
        // Character or block device, FIFO.
        return Ok(Resolved::InPlace(p));
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINKS} symbolic links to follow"),
    ))
}

enum Descriptor {
    Own(RawFd),
    Other,
}

/// Whether `link` is one of procfs's descriptor links (`/proc/PID/fd/N`, reached as
/// `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N`...): these do not
/// name a path (a pipe's is `pipe:[1234]`) and must be opened, never resolved.
fn descriptor_link(link: &Path) -> Option<Descriptor> {
    let fd: RawFd = link.file_name()?.to_str()?.parse().ok()?;
    let dir = std::fs::canonicalize(link.parent()?).ok()?;
    let parts: Vec<Component> = dir.components().collect();
    let is_proc_fd = parts.len() >= 4
        && parts[0] == Component::RootDir
        && parts[1] == Component::Normal("proc".as_ref())
        && parts.last() == Some(&Component::Normal("fd".as_ref()));
    if !is_proc_fd {
        return None;
    }
    let own = parts[2] == Component::Normal(std::process::id().to_string().as_ref());
    Some(if own {
        Descriptor::Own(fd)
    } else {
        Descriptor::Other
    })
}

/// A new descriptor (close-on-exec) for this process's descriptor `fd`: the same open file, its
/// offset and flags shared.
fn duplicate(fd: RawFd) -> io::Result<File> {
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) reads no memory; on an fd that is not open it fails with
    // EBADF, which is returned.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just returned by fcntl, is open, and is owned by nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// Refuses outputs that would replace an input, or each other: `Err` naming the two paths when
/// the file an output replaces (its path, symbolic links followed as [`OutFile::create`] follows
/// them, a dangling link's target included) is an input's regular file (by device and inode, so
/// an input given as `-` is stdin's file: `-o run.txt < run.txt`), or is the file another output
/// replaces (an existing file by device and inode, a new one by its directory's canonical path
/// and its name). Outputs written in place (devices, FIFOs, this process's descriptors such as
/// `/dev/stdout` and `/dev/null`) and inputs that are not regular files (pipes) are never refused.
/// A hard link of an input is refused too, though the atomic rename would leave the input's own
/// name untouched. An [`OutFile`] replaces a file only at its commit, so without this check the
/// input would be read whole and then be replaced by the output, with no error.
pub fn check_distinct(outputs: &[&Path], inputs: &[&Path]) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    #[derive(PartialEq)]
    enum Id {
        File(u64, u64),
        New(PathBuf),
    }
    let file_id = |p: &Path| {
        (std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| Id::File(m.dev(), m.ino()))
    };
    let input_id = |p: &Path| match p == Path::new("-") {
        true => file_id(Path::new("/dev/stdin")),
        false => file_id(p),
    };
    // What the output's commit replaces; `None` for what is written in place, or a path that
    // cannot be opened (OutFile::create then says why).
    let output_id = |p: &Path| match resolve(p).ok()? {
        Resolved::Replace(real) => file_id(&real).or_else(|| {
            let dir = real.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()?;
            Some(Id::New(dir.join(real.file_name()?)))
        }),
        Resolved::InPlace(_) | Resolved::OwnDescriptor(_) => None,
    };
    let refuse = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    let outs: Vec<_> = outputs.iter().map(|p| (p, output_id(p))).collect();
    for (i, (out, id)) in outs.iter().enumerate() {
        let Some(id) = id else { continue };
        if let Some(input) = inputs.iter().find(|p| input_id(p).as_ref() == Some(id)) {
            return refuse(format!(
                "{}: is also an input ({}): writing it would replace what is read",
                out.display(),
                input.display()
            ));
        }
        if let Some((other, _)) = outs[..i].iter().find(|(_, o)| o.as_ref() == Some(id)) {
            return refuse(format!(
                "{} and {} are the same file: one output would replace the other",
                other.display(),
                out.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn outputs_are_stdout_or_files_committed_together() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(Output::create(None).unwrap().name(), "stdout");
        assert_eq!(
            Output::create(Some(Path::new("-"))).unwrap().name(),
            "stdout"
        );
        std::fs::write(d.join("b"), b"old b").unwrap();
        let mut a = Output::create(Some(&d.join("a"))).unwrap();
        let mut b = Output::create(Some(&d.join("b"))).unwrap();
        assert_eq!(a.name(), d.join("a").display().to_string());
        a.writer().write_all(b"new a").unwrap();
        b.writer().write_all(b"new b").unwrap();
        // Nothing is visible before the commit (the bytes are still in the buffers).
        assert!(!d.join("a").exists());
        assert_eq!(std::fs::read(d.join("b")).unwrap(), b"old b");
        commit_outputs([a, b]).unwrap();
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"new a");
        assert_eq!(std::fs::read(d.join("b")).unwrap(), b"new b");
        let missing = d.join("no/such/dir/x");
        let Err(e) = Output::create(Some(&missing)) else {
            panic!("created in a missing directory");
        };
        assert_eq!(e.step, OutputStep::Create);
        assert!(e.to_string().starts_with(&format!(
            "{}: cannot create the output file: ",
            missing.display()
        )));
    }

    #[test]
    fn resolves_links_to_their_final_target() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("real"), b"old").unwrap();
        symlink("real", d.join("one")).unwrap();
        symlink(d.join("one"), d.join("two")).unwrap();
        assert_eq!(
            resolve(&d.join("two")).unwrap(),
            Resolved::Replace(d.join("real"))
        );
        // A dangling link: its target is created, as a shell's `>` does.
        symlink("missing", d.join("dangling")).unwrap();
        assert_eq!(
            resolve(&d.join("dangling")).unwrap(),
            Resolved::Replace(d.join("missing"))
        );
        // A loop is an error, not a hang.
        symlink("loop-b", d.join("loop-a")).unwrap();
        symlink("loop-a", d.join("loop-b")).unwrap();
        assert!(resolve(&d.join("loop-a")).is_err());
    }

    #[test]
    fn procfs_descriptor_links_are_descriptors() {
        assert_eq!(
            resolve(Path::new("/dev/stdout")).unwrap(),
            Resolved::OwnDescriptor(1)
        );
        assert_eq!(
            resolve(Path::new("/dev/fd/2")).unwrap(),
            Resolved::OwnDescriptor(2)
        );
        assert_eq!(
            resolve(Path::new("/proc/self/fd/1")).unwrap(),
            Resolved::OwnDescriptor(1)
        );
        // Init's descriptors are another process's.
        if let Ok(Resolved::InPlace(p)) = resolve(Path::new("/proc/1/fd/1")) {
            assert_eq!(p, Path::new("/proc/1/fd/1"));
        }
    }

    #[test]
    fn directories_sockets_and_empty_paths_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = OutFile::create(dir.path()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        let sock = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let e = OutFile::create(&sock).unwrap_err();
        assert!(e.to_string().contains("socket"), "{e}");
        assert!(OutFile::create("").is_err());
    }
}
