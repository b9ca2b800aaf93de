//! The errors of a workload round, and how an apiserver refusal reads (its code, its message).

/// An apiserver request that failed, with what it was about (`pod web-0`, `cloneset ns/web`).
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct ApiError {
    pub what: String,
    #[source]
    pub source: kube::Error,
}

impl ApiError {
    /// The apiserver's status code, when it answered with a Status.
    pub fn status_code(&self) -> Option<u16> {
        status_code(&self.source)
    }
}

/// A closure wrapping a `kube::Error` about `what` (for `map_err`).
pub fn api_error<E: From<ApiError>>(what: impl Into<String>) -> impl FnOnce(kube::Error) -> E {
    let what = what.into();
    move |source| E::from(ApiError { what, source })
}

/// An apiserver error as Go's `err.Error()` reads (the Status message), for conditions.
pub fn error_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

pub fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Why a workload round failed (the round is retried after a backoff).
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The kind's planner refused the snapshot.
    #[error(transparent)]
    Plan(#[from] crate::workload::PlanError),
    #[error(transparent)]
    Revision(#[from] crate::workload::revision::RevisionError),
    #[error("{0}: cannot create a revision after {1} hash collisions")]
    Collisions(String, i32),
    #[error("{0}: cannot adopt pods: {1}")]
    CannotAdopt(String, String),
}

impl WorkloadError {
    /// The reason a failed reconcile is counted under: the kind of error, and for an apiserver
    /// refusal its status code (`api_409`; `api` when it gave none).
    pub fn metric_label(&self) -> String {
        match self {
            WorkloadError::Api(error) => match error.status_code() {
                Some(code) => format!("api_{code}"),
                None => "api".into(),
            },
            WorkloadError::Plan(_) => "plan".into(),
            WorkloadError::Revision(_) => "revision".into(),
            WorkloadError::Collisions(..) => "revision_collisions".into(),
            WorkloadError::CannotAdopt(..) => "cannot_adopt".into(),
        }
    }

    /// A write that could not be encoded (never expected: the types always serialize).
    pub fn encoding(what: impl Into<String>, error: serde_json::Error) -> Self {
        WorkloadError::Api(ApiError {
            what: what.into(),
            source: kube::Error::SerdeError(error),
        })
    }
}
