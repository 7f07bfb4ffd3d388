//! Every kind of path an output can name: new, regular, symbolic link, device, FIFO, descriptor.

use lemma_outfile::OutFile;
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn write_and_commit(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = OutFile::create(path)?;
    out.write_all(bytes)?;
    out.commit()
}

/// The only test of this binary that sets the umask (it is the process's).
#[test]
fn new_files_take_the_umask_and_existing_files_keep_their_mode() {
    // SAFETY: umask only sets the process's file creation mask.
    unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.tsv");
    write_and_commit(&new, b"x\n").unwrap();
    assert_eq!(
        std::fs::metadata(&new).unwrap().permissions().mode() & 0o777,
        0o644
    );

    let kept = dir.path().join("kept.tsv");
    std::fs::write(&kept, b"old\n").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    let inode = std::fs::metadata(&kept).unwrap().ino();
    write_and_commit(&kept, b"new\n").unwrap();
    let meta = std::fs::metadata(&kept).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert_ne!(meta.ino(), inode, "replaced by a rename, not rewritten");
    assert_eq!(std::fs::read(&kept).unwrap(), b"new\n");
    assert_eq!(names_in(dir.path()), ["kept.tsv", "new.tsv"]);
}

#[test]
fn nothing_appears_before_the_commit_and_nothing_is_left_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.tsv");
    std::fs::write(&path, b"old\n").unwrap();
    {
        let mut out = OutFile::create(&path).unwrap();
        assert!(out.is_atomic());
        out.write_all(b"half a report").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
        // Dropped: an error path.
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"old\n");
    assert_eq!(names_in(dir.path()), ["out.tsv"]);

    let out = OutFile::create(dir.path().join("never.tsv")).unwrap();
    out.discard().unwrap();
    assert_eq!(names_in(dir.path()), ["out.tsv"]);
}

#[test]
fn a_symbolic_link_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("results")).unwrap();
    std::fs::write(d.join("results/today.tsv"), b"old\n").unwrap();
    std::os::unix::fs::symlink("results/today.tsv", d.join("latest")).unwrap();
    write_and_commit(&d.join("latest"), b"new\n").unwrap();
    assert!(std::fs::symlink_metadata(d.join("latest"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_link(d.join("latest")).unwrap(),
        Path::new("results/today.tsv")
    );
    assert_eq!(
        std::fs::read(d.join("results/today.tsv")).unwrap(),
        b"new\n"
    );
    assert_eq!(names_in(&d.join("results")), ["today.tsv"]);

    // A dangling link: its target is created and the link now resolves.
    std::os::unix::fs::symlink("results/tomorrow.tsv", d.join("next")).unwrap();
    write_and_commit(&d.join("next"), b"made\n").unwrap();
    assert_eq!(std::fs::read(d.join("next")).unwrap(), b"made\n");
    assert!(std::fs::symlink_metadata(d.join("next"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo reads nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut s)
                .unwrap();
            s
        })
    };
    let mut out = OutFile::create(&fifo).unwrap();
    assert!(!out.is_atomic());
    out.write_all(b"through the pipe\n").unwrap();
    out.commit().unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe\n");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(names_in(dir.path()), ["pipe"]);
}

/// A character device made with mknod (root only): `1:3` is the null device, `1:7` the full one.
fn make_device(path: &Path, minor: u32) -> bool {
    // SAFETY: geteuid reads nothing.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mknod needs root");
        return false;
    }
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) };
    if r != 0 {
        eprintln!(
            "skipped: mknod refused here: {}",
            std::io::Error::last_os_error()
        );
        return false;
    }
    true
}

#[test]
fn a_device_is_written_in_place_and_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let full = dir.path().join("full");
    if !make_device(&null, 3) || !make_device(&full, 7) {
        return;
    }
    let mut out = OutFile::create(&null).unwrap();
    assert!(!out.is_atomic());
    out.write_all(b"discarded by the device\n").unwrap();
    out.commit().unwrap();
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device());
    assert_eq!(meta.rdev(), libc::makedev(1, 3));

    // The full device: the write fails, the error is returned, the device stays.
    let mut out = OutFile::create(&full).unwrap();
    let e = out.write_all(b"no room\n").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    drop(out);
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());

    // Through a symbolic link too.
    std::os::unix::fs::symlink("null", dir.path().join("to-null")).unwrap();
    write_and_commit(&dir.path().join("to-null"), b"x").unwrap();
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(names_in(dir.path()), ["full", "null", "to-null"]);
}

#[test]
fn own_descriptors_are_duplicated_not_reopened() {
    // Descriptor N of this process, pointing at a file opened for appending: the bytes are
    // appended at its offset, and the file is neither truncated nor replaced.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    std::fs::write(&log, b"first\n").unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    use std::os::fd::AsRawFd;
    let path = format!("/dev/fd/{}", f.as_raw_fd());
    let inode = std::fs::metadata(&log).unwrap().ino();
    write_and_commit(Path::new(&path), b"second\n").unwrap();
    assert_eq!(std::fs::read(&log).unwrap(), b"first\nsecond\n");
    assert_eq!(std::fs::metadata(&log).unwrap().ino(), inode);
    drop(f);
    // A descriptor that is not open: an error (EBADF), not a file named after it.
    assert!(OutFile::create("/proc/self/fd/987654").is_err());
}

/// `check_distinct`: an output naming an input's file (by its own name, a hard link, a symbolic
/// link or another spelling) is refused, as are two outputs naming one file whether it exists or
/// not (a dangling link and its target too); different files, devices, descriptors and inputs
/// that are not regular files pass.
#[test]
fn outputs_that_name_an_input_or_each_other_are_refused() {
    use lemma_outfile::check_distinct;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("in.txt"), b"data").unwrap();
    std::fs::hard_link(p("in.txt"), p("hard.txt")).unwrap();
    std::os::unix::fs::symlink(p("in.txt"), p("soft.txt")).unwrap();
    std::fs::create_dir(p("sub")).unwrap();
    let refused = |outs: &[&Path], ins: &[&Path]| {
        let e = check_distinct(outs, ins).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        e.to_string()
    };
    let input = p("in.txt");
    for out in [
        p("in.txt"),
        p("hard.txt"),
        p("soft.txt"),
        p("sub/../in.txt"),
    ] {
        let e = refused(&[&out], &[&input]);
        assert!(e.contains("is also an input"), "{e}");
        assert!(e.contains(&*out.to_string_lossy()), "{e}");
        // The input named through the link instead.
        refused(&[&input], &[&out]);
    }
    // Two outputs, existing or new, under any spelling.
    let e = refused(&[&p("new.txt"), &p("sub/../new.txt")], &[]);
    assert!(e.contains("are the same file"), "{e}");
    refused(&[&p("hard.txt"), &p("in.txt")], &[]);
    // A relative new path and its absolute spelling.
    let cwd = std::env::current_dir().unwrap();
    let rel = Path::new("not-there-yet.out");
    refused(&[rel, &cwd.join(rel)], &[]);
    // Distinct files, devices written in place, and inputs that are not regular files pass.
    check_distinct(&[&p("a.out"), &p("b.out")], &[&input]).unwrap();
    check_distinct(&[Path::new("/dev/null"), Path::new("/dev/null")], &[]).unwrap();
    check_distinct(&[Path::new("/dev/null")], &[Path::new("/dev/null")]).unwrap();
    check_distinct(&[&p("a.out")], &[Path::new("-"), &p("sub")]).unwrap();
    assert!(!rel.exists());
    // A dangling link's target is what its commit creates: the same file as the target named.
    std::os::unix::fs::symlink(p("target.out"), p("dangling")).unwrap();
    let e = refused(&[&p("dangling"), &p("target.out")], &[]);
    assert!(e.contains("are the same file"), "{e}");
    // This process's descriptors are written in place, however often named.
    check_distinct(&[Path::new("/dev/stdout"), Path::new("/dev/stdout")], &[]).unwrap();
}

/// `commit_all`: nothing is renamed until every file is written and synced; then all are, in
/// the order given. A rename that fails (here: a directory put where the file goes) stops the
/// sequence: the files before it are replaced, the one that failed and those after it are not,
/// the error says which, and no temporary is left.
#[test]
fn a_set_is_committed_in_order_and_a_failed_rename_stops_it() {
    use lemma_outfile::commit_all;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("table"), b"old table").unwrap();
    std::fs::write(p("summary"), b"old summary").unwrap();
    let open = |name: &str, text: &[u8]| {
        let mut f = OutFile::create(p(name)).unwrap();
        f.write_all(text).unwrap();
        f
    };
    let (t, s) = (open("table", b"new table"), open("summary", b"new summary"));
    assert_eq!(names_in(dir.path()), ["summary", "table"]);
    commit_all([t, s]).unwrap();
    assert_eq!(std::fs::read(p("table")).unwrap(), b"new table");
    assert_eq!(std::fs::read(p("summary")).unwrap(), b"new summary");
    assert_eq!(names_in(dir.path()), ["summary", "table"]);

    // `blocked` is a new path when opened; a non-empty directory appears there before the
    // commit, so its rename fails (EISDIR).
    let (t, b, s) = (
        open("table", b"third table"),
        open("blocked", b"never"),
        open("summary", b"third summary"),
    );
    std::fs::create_dir(p("blocked")).unwrap();
    std::fs::write(p("blocked/inside"), b"").unwrap();
    let e = commit_all([t, b, s]).unwrap_err();
    assert_eq!(e.path(), p("blocked"));
    assert_eq!(e.replaced(), [p("table")]);
    let msg = e.to_string();
    assert!(msg.contains("blocked: cannot replace it: "), "{msg}");
    assert!(msg.contains("(already replaced: "), "{msg}");
    assert_eq!(std::fs::read(p("table")).unwrap(), b"third table");
    assert_eq!(std::fs::read(p("summary")).unwrap(), b"new summary");
    assert_eq!(names_in(dir.path()), ["blocked", "summary", "table"]);

    // The failing file first: nothing is replaced.
    let (b, t) = (open("later", b"never"), open("table", b"fourth table"));
    std::fs::create_dir(p("later")).unwrap();
    std::fs::write(p("later/inside"), b"").unwrap();
    let e = commit_all([b, t]).unwrap_err();
    assert!(e.replaced().is_empty());
    assert_eq!(std::fs::read(p("table")).unwrap(), b"third table");
    assert_eq!(
        names_in(dir.path()),
        ["blocked", "later", "summary", "table"]
    );
}
