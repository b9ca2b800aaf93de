//! CPU priority of the threads that do background work.
//!
//! `serve` answers admission and runs the controllers in one process. When the cores are short (a
//! first status round over 50,000 SidecarSets, a rollout storm), the kernel shares them by
//! priority: the controllers' threads run at a higher nice value than the webhook port's, so a
//! request's work is scheduled ahead of a reconcile's, while an idle core still goes to the
//! reconciles. Linux keeps the nice value per thread (`setpriority(PRIO_PROCESS, 0, …)` changes the
//! calling thread only) and a thread starts with its creator's, so every thread a lowered thread
//! starts is lowered too. Any process may lower its own threads' priority; raising it back needs
//! privileges, which is why the webhook port is not raised instead.

use std::io;

use rustix::process::{getpriority_process, setpriority_process};

/// How much lower than the process's threads the controllers' threads run: at nice +10 the
/// kernel's CFS weights a thread 110 against 1,024 at nice 0, so a busy controller thread gets
/// about a tenth of a core a request thread wants, and all of a core nobody else wants.
pub const BACKGROUND_NICENESS: i32 = 10;

/// The highest nice value Linux accepts.
const LOWEST_PRIORITY: i32 = 19;

/// The calling thread's nice value.
pub fn this_thread_nice() -> io::Result<i32> {
    Ok(getpriority_process(None)?)
}

/// Lowers the calling thread's priority by `by` nice levels (at most to the lowest), and returns
/// its nice value now. Threads it starts from now on inherit it.
pub fn lower_this_thread(by: i32) -> io::Result<i32> {
    let nice = this_thread_nice()?
        .saturating_add(by.max(0))
        .min(LOWEST_PRIORITY);
    setpriority_process(None, nice)?;
    Ok(nice)
}

#[cfg(test)]
mod tests;
