//! The process's limit on open files.
//!
//! Linux starts processes with a soft limit of 1024 descriptors (sized for `select(2)`, which
//! nothing here uses) under a much higher hard limit. A webhook holding more than 1024
//! connections would fail `accept` and every file open — the admin port and the cluster watches
//! included — long before its connection cap, so every command raises the soft limit to the hard
//! one at start, as Go's runtime does for the Kubernetes components.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// The soft limit before and after [`raise_soft_limit`]; `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftLimit {
    pub before: Option<u64>,
    pub after: Option<u64>,
}

/// Raises the soft limit on open files to the hard limit.
pub fn raise_soft_limit() -> std::io::Result<SoftLimit> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return Ok(SoftLimit {
            before: limit.current,
            after: limit.current,
        });
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    )?;
    Ok(SoftLimit {
        before: limit.current,
        after: getrlimit(Resource::Nofile).current,
    })
}

/// The soft limit on open files now; `None` is unlimited.
pub fn soft_limit() -> Option<u64> {
    getrlimit(Resource::Nofile).current
}

#[cfg(test)]
mod tests;
