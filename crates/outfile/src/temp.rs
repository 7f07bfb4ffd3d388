//! The temporary file behind an output that replaces a regular file, and the registry of the
//! temporaries that have a name.
//!
//! A temporary is opened with `O_TMPFILE` in the target's directory: it has no name, so nothing
//! can be left behind by an error, a panic or a kill while it is written and synced. Only when a
//! set of outputs is committed ([`crate::commit_all`]) does it get a hidden name, `.NAME.XXXXXX`
//! beside its target (`linkat`), to be renamed over the target right after. On a file system
//! without `O_TMPFILE` it has that hidden name from the start. Every hidden name is listed in
//! [`named`] while it exists, so that the signal thread ([`crate::remove_temporaries_on_signals`])
//! can remove them; the renames of a commit happen with that list locked, so a signal handled
//! there waits until they are done.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A hidden name in a directory (open as `dir`) that a live temporary file has.
pub(crate) struct Named {
    pub(crate) dir: RawFd,
    pub(crate) name: CString,
}

static NAMED: Mutex<Vec<Named>> = Mutex::new(Vec::new());

/// The hidden names of this process's live temporaries, locked.
pub(crate) fn named() -> MutexGuard<'static, Vec<Named>> {
    NAMED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `r`, or the error in `errno` when it is negative.
fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn cstr(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a path with a NUL byte names no file",
        )
    })
}

/// `openat(dir, name, flags, mode)`, close-on-exec.
fn open_at(dir: RawFd, name: &CString, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; openat reads nothing else. The descriptor returned is
    // new and owned by nothing else.
    let fd = cvt(unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    // SAFETY: see above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A temporary file that becomes the file `name` in `dir` at its commit.
#[derive(Debug)]
pub(crate) struct Temp {
    pub(crate) file: File,
    dir: OwnedFd,
    /// The target's name in `dir`.
    name: CString,
    /// The file's hidden name in `dir`, while it has one (then listed in [`named`]).
    hidden: Option<CString>,
}

impl Temp {
    /// A temporary for replacing (or creating) the regular file `path`, whose last component is
    /// not a symbolic link. Its mode is `0666` less the umask, or the existing file's mode (and,
    /// where allowed, its owner).
    pub(crate) fn create(path: &Path) -> io::Result<Temp> {
        Temp::create_with(path, true)
    }

    /// [`Temp::create`], with `O_TMPFILE` tried only when `unnamed` (the tests' way to a named
    /// temporary).
    fn create_with(path: &Path, unnamed: bool) -> io::Result<Temp> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let name = cstr(name.as_bytes())?;
        let dir_path = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = open_at(
            libc::AT_FDCWD,
            &cstr(dir_path.as_os_str().as_bytes())?,
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )?;
        let existing = stat_at(dir.as_raw_fd(), &name)?;
        let dot = cstr(b".")?;
        let tmpfile = match unnamed {
            true => open_at(
                dir.as_raw_fd(),
                &dot,
                libc::O_TMPFILE | libc::O_WRONLY,
                0o666,
            ),
            false => Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
        };
        let (fd, hidden) = match tmpfile {
            Ok(fd) => (fd, None),
            // A file system without O_TMPFILE (EOPNOTSUPP), or a kernel before 3.11 (EISDIR).
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
                let mut named = named();
                loop {
                    let hidden = hidden_name(&name)?;
                    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
                    match open_at(dir.as_raw_fd(), &hidden, flags, 0o666) {
                        Ok(fd) => {
                            named.push(Named {
                                dir: dir.as_raw_fd(),
                                name: hidden.clone(),
                            });
                            break (fd, Some(hidden));
                        }
                        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        };
        let temp = Temp {
            file: File::from(fd),
            dir,
            name,
            hidden,
        };
        if let Some(st) = existing.filter(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG) {
            temp.take_owner_and_mode(&st)?;
        }
        Ok(temp)
    }

    /// Gives the temporary the existing file's owner (where allowed: `EPERM` is not an error)
    /// and mode, in that order (a change of owner may clear set-id bits).
    fn take_owner_and_mode(&self, st: &libc::stat) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        // SAFETY: fchown and fchmod on a descriptor this value owns; they read no memory.
        match cvt(unsafe { libc::fchown(fd, st.st_uid, st.st_gid) }) {
            Err(e) if e.raw_os_error() != Some(libc::EPERM) => return Err(e),
            _ => {}
        }
        // SAFETY: as above.
        cvt(unsafe { libc::fchmod(fd, st.st_mode & 0o7777) })?;
        Ok(())
    }

    /// Gives the (synced) temporary its hidden name beside the target, listed in [`named`], and
    /// syncs its data again (some file systems, btrfs among them, skip the sync of a file with
    /// no name).
    pub(crate) fn link(&mut self) -> io::Result<()> {
        if self.hidden.is_none() {
            let fd = self.file.as_raw_fd();
            let proc_path = cstr(format!("/proc/self/fd/{fd}").as_bytes())?;
            let empty = cstr(b"")?;
            let mut named = named();
            loop {
                let hidden = hidden_name(&self.name)?;
                // SAFETY: valid C strings and descriptors this value owns.
                let mut r = cvt(unsafe {
                    libc::linkat(
                        libc::AT_FDCWD,
                        proc_path.as_ptr(),
                        self.dir.as_raw_fd(),
                        hidden.as_ptr(),
                        libc::AT_SYMLINK_FOLLOW,
                    )
                });
                if matches!(&r, Err(e) if e.raw_os_error() == Some(libc::ENOENT))
                    && !Path::new("/proc/self/fd").exists()
                {
                    // No /proc: AT_EMPTY_PATH links the descriptor itself (a privileged call).
                    // SAFETY: as above.
                    r = cvt(unsafe {
                        libc::linkat(
                            fd,
                            empty.as_ptr(),
                            self.dir.as_raw_fd(),
                            hidden.as_ptr(),
                            libc::AT_EMPTY_PATH,
                        )
                    });
                }
                match r {
                    Ok(_) => {
                        named.push(Named {
                            dir: self.dir.as_raw_fd(),
                            name: hidden.clone(),
                        });
                        self.hidden = Some(hidden);
                        break;
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        self.file.sync_data()
    }

    /// Renames the hidden name over the target; `named` is the registry, locked by the caller.
    pub(crate) fn rename(&mut self, named: &mut Vec<Named>) -> io::Result<()> {
        let Some(hidden) = &self.hidden else {
            return Err(io::Error::other("the temporary file has no name to rename"));
        };
        let dir = self.dir.as_raw_fd();
        // SAFETY: valid C strings and a directory descriptor this value owns.
        cvt(unsafe { libc::renameat(dir, hidden.as_ptr(), dir, self.name.as_ptr()) })?;
        forget(named, dir, hidden);
        self.hidden = None;
        Ok(())
    }

    /// Syncs the target's directory (its new entry).
    pub(crate) fn sync_dir(&self) -> io::Result<()> {
        // SAFETY: fsync of a descriptor this value owns.
        cvt(unsafe { libc::fsync(self.dir.as_raw_fd()) }).map(drop)
    }
}

impl Drop for Temp {
    /// A temporary that was not renamed loses its hidden name; one without a name vanishes when
    /// its descriptor closes.
    fn drop(&mut self) {
        if let Some(hidden) = self.hidden.take() {
            let mut named = named();
            let dir = self.dir.as_raw_fd();
            // SAFETY: a valid C string and a directory descriptor this value owns.
            unsafe { libc::unlinkat(dir, hidden.as_ptr(), 0) };
            forget(&mut named, dir, &hidden);
        }
    }
}

/// Takes `(dir, name)` off the registry.
fn forget(named: &mut Vec<Named>, dir: RawFd, name: &CString) {
    named.retain(|n| !(n.dir == dir && n.name == *name));
}

/// `name`'s status in `dir` (symbolic links not followed), `None` if there is nothing there.
fn stat_at(dir: RawFd, name: &CString) -> io::Result<Option<libc::stat>> {
    // SAFETY: a zeroed stat is a valid value for fstatat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a valid pointer to `st`.
    match cvt(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) }) {
        Ok(_) => Ok(Some(st)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `.NAME.XXXXXX`, six random letters and digits, the name cut so that the whole fits in a
/// file name's 255 bytes.
fn hidden_name(name: &CString) -> io::Result<CString> {
    const ALNUM: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let base = name.as_bytes();
    let base = &base[..base.len().min(255 - 8)];
    let mut v = Vec::with_capacity(base.len() + 8);
    v.push(b'.');
    v.extend_from_slice(base);
    v.push(b'.');
    let mut x = random();
    for _ in 0..6 {
        v.push(ALNUM[(x % 62) as usize]);
        x /= 62;
    }
    cstr(&v)
}

/// 64 random bits: the kernel's, or the clock, the process id and a counter mixed.
fn random() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut seed = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into `seed`.
    let got = unsafe { libc::getrandom(seed.as_mut_ptr().cast(), 8, libc::GRND_NONBLOCK) };
    let mut x = u64::from_ne_bytes(seed);
    if got != 8 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        x = nanos ^ (u64::from(std::process::id()) << 32);
    }
    x ^= COUNTER
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn listed(name: &str) -> bool {
        named().iter().any(|n| n.name.to_str() == Ok(name))
    }

    /// Without O_TMPFILE the temporary is a hidden, listed sibling from the start: removed and
    /// unlisted when dropped, renamed and unlisted at the commit, the target's mode taken.
    #[test]
    fn a_named_temporary_is_listed_while_it_exists() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.tsv");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o604)).unwrap();
        let t = Temp::create_with(&target, false).unwrap();
        let names = names_in(dir.path());
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names[0].starts_with(".out.tsv."), "{names:?}");
        assert!(listed(&names[0]));
        drop(t);
        assert_eq!(names_in(dir.path()), ["out.tsv"]);
        assert!(!listed(&names[0]));

        let mut t = Temp::create_with(&target, false).unwrap();
        t.file.write_all(b"new").unwrap();
        let hidden = t.hidden.clone().unwrap();
        t.link().unwrap();
        assert_eq!(t.hidden.as_ref(), Some(&hidden), "not linked twice");
        t.rename(&mut named()).unwrap();
        assert!(!listed(hidden.to_str().unwrap()));
        drop(t);
        assert_eq!(names_in(dir.path()), ["out.tsv"]);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o604);
    }

    /// With O_TMPFILE the temporary has no name until it is linked, and is listed from then
    /// until its rename.
    #[test]
    fn an_unnamed_temporary_is_named_only_when_linked() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new.tsv");
        let mut t = Temp::create(&target).unwrap();
        t.file.write_all(b"x").unwrap();
        assert!(names_in(dir.path()).is_empty());
        assert!(t.hidden.is_none());
        t.link().unwrap();
        let names = names_in(dir.path());
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with(".new.tsv."), "{names:?}");
        assert!(listed(&names[0]));
        drop(t);
        assert!(names_in(dir.path()).is_empty());
        assert!(!listed(&names[0]));
    }

    #[test]
    fn hidden_names_are_hidden_distinct_and_fit() {
        let a = hidden_name(&cstr(b"s.sum").unwrap()).unwrap();
        let b = hidden_name(&cstr(b"s.sum").unwrap()).unwrap();
        assert_ne!(a, b);
        let a = a.to_str().unwrap();
        assert!(a.starts_with(".s.sum.") && a.len() == 13, "{a}");
        assert!(a[7..].bytes().all(|c| c.is_ascii_alphanumeric()), "{a}");
        let long = hidden_name(&cstr(&[b'x'; 255]).unwrap()).unwrap();
        assert_eq!(long.as_bytes().len(), 255);
    }
}
