//! The runtimes of `serve` beside the process's own (which runs the admin port and the
//! catalogue's watch): one for the webhook port, one for the controllers at a lower priority.

/// Worker threads of the admission runtime.
const ADMISSION_THREADS: usize = 2;

/// The runtime the webhook port runs on, apart from the one of the controllers and watches: an
/// admission request never waits in a queue behind a reconcile, a list page being decoded or a
/// burst of watch events; only the operating system shares the cores between them.
pub(super) fn admission() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(ADMISSION_THREADS)
        .thread_name("admission")
        .enable_all()
        .build()
}

/// The runtime the controllers run on: their reconciles, watches, caches and clients. Its threads
/// run at a lower priority ([`crate::priority`]) than the webhook port's runtime and the process's
/// own, so while the cores are short the kernel runs admission first (and the admin port: /readyz
/// reports leadership); the controllers keep whatever CPU is left.
pub(super) fn controllers() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("controllers")
        .on_thread_start(|| {
            if let Err(error) =
                crate::priority::lower_this_thread(crate::priority::BACKGROUND_NICENESS)
            {
                tracing::warn!(%error, "cannot lower a controller thread's priority");
            }
        })
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests;
