//! Memory-mapped inputs, and files that change under their mapping.
//!
//! A mapped file that another process truncates reads as zeros past its new end within its last
//! page, and raises SIGBUS on a page wholly past it; lines appended to it are never seen. Either
//! way the numbers would silently be of another file. So every mapped input keeps a [`Stamp`] of
//! its file as it was mapped (its length and modification time, read through the open
//! descriptor) and checks it once it has been read ([`Stamp::check`]): a change is an error
//! naming the file, as it is when a streamed plain file changes. And each mapping's address range
//! and file name are noted in a fixed table that a SIGBUS handler reads without allocating
//! ([`describe_fault`]), so that the command names the file that was cut short.

use crate::error::{ErrorKind, InputError};
use memmap2::Mmap;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

/// What a file was when it was mapped (or opened to be read by position): compared with what it
/// is once read.
#[derive(Clone, Debug)]
pub(crate) struct Stamp {
    file: Arc<File>,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    /// `file` as it is now, `len` bytes long when it was mapped or opened.
    pub(crate) fn new(file: Arc<File>, len: u64) -> Stamp {
        let modified = file.metadata().ok().and_then(|m| m.modified().ok());
        Stamp {
            file,
            len,
            modified,
        }
    }

    /// An error naming `path` if the file's length or modification time is no longer what they
    /// were.
    pub(crate) fn check(&self, path: &Path) -> Result<(), InputError> {
        let m = self
            .file
            .metadata()
            .map_err(|e| InputError::read(path, e))?;
        if m.len() != self.len || m.modified().ok() != self.modified {
            return Err(changed(path, self.len, m.len()));
        }
        Ok(())
    }
}

/// The error for a file that changed while it was read: `from` bytes when opened, `to` now.
pub(crate) fn changed(path: &Path, from: u64, to: u64) -> InputError {
    let how = if from == to {
        "rewritten in place: its modification time moved".to_string()
    } else {
        format!("from {from} to {to} bytes")
    };
    InputError::file(
        ErrorKind::Io,
        path,
        format!("changed while it was read ({how})"),
    )
}

/// Maps `file` (read-only, private), noting the mapping under `path` for [`describe_fault`].
///
/// # Safety
/// As [`Mmap::map`]: the mapping is only read, and a file changed under it is found by a
/// [`Stamp`] or reported on SIGBUS, never relied upon.
pub(crate) unsafe fn map(file: &File, path: &Path) -> std::io::Result<Mmap> {
    // SAFETY: the caller's promise, above.
    let map = unsafe { Mmap::map(file) }?;
    note(&map, path);
    Ok(map)
}

/// Mappings noted at once (the newest overwrite the oldest).
const SLOTS: usize = 64;
/// Bytes of a file name kept (its last ones, for a longer path).
const NAME: usize = 256;

/// One noted mapping. `seq` is 0 while the slot is written, else the mapping's number plus one.
struct Slot {
    seq: AtomicU64,
    start: AtomicUsize,
    len: AtomicUsize,
    name_len: AtomicUsize,
    name: [AtomicU8; NAME],
}

#[allow(clippy::declare_interior_mutable_const)] // each slot of the table is its own
const EMPTY_SLOT: Slot = Slot {
    seq: AtomicU64::new(0),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    name_len: AtomicUsize::new(0),
    name: [const { AtomicU8::new(0) }; NAME],
};

static TABLE: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Notes that `bytes` (a mapping) are the file `path`'s.
fn note(bytes: &[u8], path: &Path) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let slot = &TABLE[(n % SLOTS as u64) as usize];
    slot.seq.store(0, Ordering::Release);
    let name = path.as_os_str().as_encoded_bytes();
    let name = &name[name.len().saturating_sub(NAME)..];
    for (d, &b) in slot.name.iter().zip(name) {
        d.store(b, Ordering::Relaxed);
    }
    slot.name_len.store(name.len(), Ordering::Relaxed);
    slot.start.store(bytes.as_ptr() as usize, Ordering::Relaxed);
    slot.len.store(bytes.len(), Ordering::Relaxed);
    slot.seq.store(n + 1, Ordering::Release);
}

/// The name of the file whose mapping holds address `addr` (the newest noted mapping that does),
/// copied into `out`: its length, 0 if no noted mapping holds it. Async-signal-safe: atomic loads
/// and copies only, no allocation, no lock (for a SIGBUS handler; the address is the signal's
/// `si_addr`).
pub fn describe_fault(addr: usize, out: &mut [u8]) -> usize {
    let mut best: Option<(u64, &Slot)> = None;
    for slot in &TABLE {
        let seq = slot.seq.load(Ordering::Acquire);
        if seq == 0 || best.is_some_and(|(b, _)| b >= seq) {
            continue;
        }
        let (start, len) = (
            slot.start.load(Ordering::Relaxed),
            slot.len.load(Ordering::Relaxed),
        );
        if addr >= start && addr - start < len {
            best = Some((seq, slot));
        }
    }
    let Some((_, slot)) = best else {
        return 0;
    };
    let n = slot
        .name_len
        .load(Ordering::Relaxed)
        .min(NAME)
        .min(out.len());
    for (d, s) in out.iter_mut().zip(&slot.name[..n]) {
        *d = s.load(Ordering::Relaxed);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_stamp_sees_growth_shrinking_and_rewrites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "abc\n").unwrap();
        let f = Arc::new(File::open(&p).unwrap());
        let stamp = Stamp::new(f.clone(), 4);
        stamp.check(&p).unwrap();
        let mut w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        w.write_all(b"d\n").unwrap();
        let e = stamp.check(&p).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(
            e.to_string()
                .contains("changed while it was read (from 4 to 6 bytes)"),
            "{e}"
        );
        // The same length, written again later: its time moved.
        let stamp = Stamp::new(f.clone(), 6);
        let old = f.metadata().unwrap().modified().unwrap();
        let later = old + std::time::Duration::from_secs(2);
        let g = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        g.set_modified(later).unwrap();
        let e = stamp.check(&p).unwrap_err();
        assert!(e.to_string().contains("rewritten in place"), "{e}");
    }

    #[test]
    fn a_fault_address_names_the_newest_mapping_that_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mapped.txt");
        std::fs::write(&p, vec![b'x'; 10_000]).unwrap();
        let f = File::open(&p).unwrap();
        // SAFETY: a file of this test, never changed.
        let m = unsafe { map(&f, &p) }.unwrap();
        let mut out = [0u8; 512];
        let addr = m.as_ptr() as usize;
        let n = describe_fault(addr + 9_999, &mut out);
        assert_eq!(&out[..n], p.as_os_str().as_encoded_bytes());
        assert_eq!(describe_fault(usize::MAX - 1, &mut out), 0);
        assert_eq!(describe_fault(0, &mut out), 0);
    }
}
