//! Temporary files removed when the process is told to stop (SIGHUP, SIGINT, SIGTERM).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// The signals whose default action ends the process and that a user or a job scheduler sends
/// to stop it.
const SIGNALS: [libc::c_int; 3] = [libc::SIGHUP, libc::SIGINT, libc::SIGTERM];

/// Makes SIGHUP, SIGINT and SIGTERM remove this process's named temporary files before they end
/// it: the signals are blocked in the calling thread and taken by a thread of their own
/// (`sigwait`), which removes every hidden `.NAME.XXXXXX` that a commit has linked (or that a
/// file system without `O_TMPFILE` gave from the start), then ends the process by the same
/// signal, as it would have ended without this (exit status 128 + N in a shell).
///
/// A signal that comes while [`commit_all`](crate::commit_all) renames its files waits until
/// the last rename is done: a set of outputs is never split by one. Temporaries without a name
/// (the usual case) vanish with the process and need nothing.
///
/// Call it first in `main`, before any other thread starts: threads inherit the blocked
/// signals, and one started before would take a signal and end the process without the
/// cleanup. A signal ignored when it is called stays ignored (SIGHUP under `nohup`, SIGINT in a
/// background job) and one with a handler of its own keeps it. Child processes started with
/// [`std::process::Command`] start with no signal blocked. Calls after the first do nothing.
pub fn remove_temporaries_on_signals() -> io::Result<()> {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    // SAFETY: a zeroed sigset_t is valid storage for sigemptyset to initialise.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut any = false;
    // SAFETY: sigemptyset, sigaction (reading the current action only) and sigaddset are given
    // valid pointers to local values.
    unsafe {
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_DFL
            {
                libc::sigaddset(&mut set, sig);
                any = true;
            }
        }
    }
    if !any {
        return Ok(());
    }
    // SAFETY: `set` is initialised; the old mask is not asked for.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .stack_size(64 << 10)
        .spawn(move || wait_for(set));
    if let Err(e) = spawned {
        // Back as it was: the signals end the process at once.
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        return Err(e);
    }
    Ok(())
}

/// The signal thread: waits for one of `set`, removes the named temporaries, and ends the
/// process by that signal.
fn wait_for(set: libc::sigset_t) {
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is initialised and its signals are blocked in this thread (inherited).
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            continue;
        }
        // Waits for a commit's renames to end. Kept locked until the process ends: no temporary
        // gets a name, and no rename starts, from here on.
        let named = crate::temp::named();
        for n in named.iter() {
            // SAFETY: a valid C string; the directory descriptor stays open while it is listed.
            unsafe { libc::unlinkat(n.dir, n.name.as_ptr(), 0) };
        }
        // SAFETY: restoring the default action and unblocking the signal in this thread only,
        // then raising it here: the default action ends the whole process. `_exit` is the
        // fallback should it return.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut one: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut one);
            libc::sigaddset(&mut one, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
            libc::raise(sig);
            libc::_exit(128 + sig);
        }
    }
}
