//! Read-decide-write against the apiserver, again from a fresh read when the write lost a race:
//! the one conflict-retry loop of the house (controllers, the node agent, the certificate job).
//!
//! A write sent against a version someone else changed meanwhile is answered 409 Conflict; the
//! decision it carried may no longer hold, so the whole attempt (read, decide, write) runs again,
//! a bounded number of times. An attempt may hand the next one what it learned (the object a
//! write answered with, a fresh read), so a loop that moves an object through several writes
//! does not read it again between them.

use std::future::Future;

/// How one attempt ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Attempt<T, S = ()> {
    /// Finished, with this value.
    Done(T),
    /// Start over (the write conflicted, or a first write needs a second one); the next attempt
    /// starts from this.
    Again(S),
}

impl<T, S> Attempt<T, S> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Attempt<U, S> {
        match self {
            Attempt::Done(value) => Attempt::Done(f(value)),
            Attempt::Again(next) => Attempt::Again(next),
        }
    }
}

/// Whether the apiserver refused a write because the object changed since it was read. By code:
/// kube's `Status::is_conflict` goes by the reason alone.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

/// A write's result as an attempt's end: a conflict means [`Attempt::Again`].
pub fn again_on_conflict<T>(written: Result<T, kube::Error>) -> Result<Attempt<T>, kube::Error> {
    match written {
        Ok(value) => Ok(Attempt::Done(value)),
        Err(error) if is_conflict(&error) => Ok(Attempt::Again(())),
        Err(error) => Err(error),
    }
}

/// Runs `attempt` until it is done or fails, at most `attempts` times, the first from `start`,
/// each later one from what the one before handed on; `Ok(None)` when every attempt asked to
/// start over.
pub async fn retry_on_conflict<S, T, E, F, Fut>(
    attempts: usize,
    start: S,
    mut attempt: F,
) -> Result<Option<T>, E>
where
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Result<Attempt<T, S>, E>>,
{
    let mut from = start;
    for _ in 0..attempts {
        match attempt(from).await? {
            Attempt::Done(value) => return Ok(Some(value)),
            Attempt::Again(next) => from = next,
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
