//! `POST /convert`: the CRDs' conversion webhook. A ConversionReview (`apiextensions.k8s.io/v1`
//! or `v1beta1`) in, every object converted by [`crate::convert`], the review answered in the
//! version it was asked in. One object that cannot be converted fails the whole review with
//! `result.status: Failure` and a message naming the object and the field (the apiserver then
//! fails the read or write that needed it); a body that is no ConversionReview gets a 400.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::convert::{ConvertError, convert_owned};

pub const API_VERSION_V1: &str = "apiextensions.k8s.io/v1";
pub const API_VERSION_V1BETA1: &str = "apiextensions.k8s.io/v1beta1";
const KIND: &str = "ConversionReview";

#[derive(Deserialize)]
struct Review {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<Request>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    uid: String,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: String,
    #[serde(default)]
    objects: Vec<Value>,
}

/// The answer, in the wire shape the apiserver reads.
#[derive(Serialize, Debug, PartialEq)]
pub struct Answer {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: &'static str,
    pub response: Response,
}

#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    pub uid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converted_objects: Option<Vec<Value>>,
    pub result: Outcome,
}

/// A `metav1.Status`, as much of it as a ConversionReview answer uses.
#[derive(Serialize, Debug, PartialEq)]
pub struct Outcome {
    pub status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A body that cannot be answered with a ConversionReview naming its uid.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("request body is not a JSON ConversionReview: {0}")]
    NotJson(String),
    #[error(
        "unsupported ConversionReview apiVersion {0:?}: supported: \"apiextensions.k8s.io/v1\", \"apiextensions.k8s.io/v1beta1\""
    )]
    UnsupportedVersion(String),
    #[error("ConversionReview has no request")]
    MissingRequest,
}

/// The answer to one ConversionReview body. No I/O.
pub fn answer(body: &[u8]) -> Result<Answer, ReviewError> {
    let review: Review =
        serde_json::from_slice(body).map_err(|e| ReviewError::NotJson(e.to_string()))?;
    if review.api_version != API_VERSION_V1 && review.api_version != API_VERSION_V1BETA1 {
        return Err(ReviewError::UnsupportedVersion(review.api_version));
    }
    if review.kind != KIND {
        return Err(ReviewError::NotJson(format!(
            "kind is {:?}, expected \"{KIND}\"",
            review.kind
        )));
    }
    let request = review.request.ok_or(ReviewError::MissingRequest)?;
    let desired = request.desired_api_version;
    let converted: Result<Vec<Value>, String> = request
        .objects
        .into_iter()
        .enumerate()
        .map(|(index, object)| {
            let named = Named::of(&object);
            convert_owned(object, &desired).map_err(|error| named.failure(index, &error))
        })
        .collect();
    let response = match converted {
        Ok(objects) => Response {
            uid: request.uid,
            converted_objects: Some(objects),
            result: Outcome {
                status: "Success",
                message: String::new(),
            },
        },
        Err(message) => Response {
            uid: request.uid,
            converted_objects: None,
            result: Outcome {
                status: "Failure",
                message,
            },
        },
    };
    Ok(Answer {
        api_version: review.api_version,
        kind: KIND,
        response,
    })
}

/// What names an object in a failure: its kind, namespace and name (read before the object is
/// given to the conversion).
struct Named {
    kind: String,
    namespace: Option<String>,
    name: Option<String>,
}

impl Named {
    fn of(object: &Value) -> Self {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        Named {
            kind: text("/kind").unwrap_or("object").to_string(),
            namespace: text("/metadata/namespace").map(String::from),
            name: text("/metadata/name").map(String::from),
        }
    }

    /// `objects[2] (SidecarSet mesh): spec.updateStrategy.paused: Invalid value: …`.
    fn failure(&self, index: usize, error: &ConvertError) -> String {
        let name = match (self.namespace.as_deref(), self.name.as_deref()) {
            (Some(namespace), Some(name)) => format!(" {namespace}/{name}"),
            (None, Some(name)) => format!(" {name}"),
            _ => String::new(),
        };
        format!("objects[{index}] ({}{name}): {error}", self.kind)
    }
}

#[cfg(test)]
mod tests;
